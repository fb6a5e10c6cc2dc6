import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { getEncoding } from 'js-tiktoken'
import { estimateChatInputTokens, estimateTextTokens } from '../../src/billing/estimator'

/**
 * The estimate holds and count_tokens use, against a real BPE tokenizer (OpenAI's o200k):
 * never below it, and within 40% above it on prose, code and JSON.
 */
const reference = getEncoding('o200k_base')

const samples: Record<string, string> = {
  prose: readFileSync('README.md', 'utf8'),
  code: readFileSync('src/billing/hold-book.ts', 'utf8'),
  json: readFileSync('drizzle/meta/_journal.json', 'utf8'),
  numbers: Array.from({ length: 200 }, (_, index) => (index * 7919).toString()).join(', '),
}

describe('token estimate', () => {
  for (const [kind, text] of Object.entries(samples)) {
    test(`${kind}: conservative and close`, () => {
      const real = reference.encode(text).length
      const estimate = estimateTextTokens(text)
      expect(estimate).toBeGreaterThanOrEqual(real)
      expect(estimate / real).toBeLessThan(1.4)
    })
  }

  test('scripts outside Latin count a token a character; emoji pairs count once', () => {
    expect(estimateTextTokens('你好世界')).toBe(4)
    expect(estimateTextTokens('😀😀')).toBe(2)
    expect(estimateTextTokens('')).toBe(0)
  })

  test('a chat request adds framing per message, images a fixed allowance', () => {
    const text = estimateChatInputTokens({ messages: [{ role: 'user', content: 'hello there' }] })
    const withImage = estimateChatInputTokens({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }],
    })
    expect(text).toBeGreaterThan(estimateTextTokens('hello there'))
    expect(withImage - text).toBeGreaterThanOrEqual(1000)
  })
})
