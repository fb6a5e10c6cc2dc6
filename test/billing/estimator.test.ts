import { afterAll, describe, expect, test } from 'bun:test'
import {
  boundedTextTokens,
  estimateChatInputTokens,
  estimateTextTokens,
  estimateValueTokens,
  SCANNED_CHARACTERS_PER_REQUEST,
  scanBudget,
} from '../../src/billing/estimator'
import { corpus, JSON_NUMBERS, repositorySamples, type Sample, type TextClass } from './estimator-corpus'
import { o200kCount, tokenized } from './o200k-counts'

/**
 * The estimate holds and count_tokens use, against a real BPE tokenizer (OpenAI's o200k): never
 * below it on any sample, whatever the text; at most 35% above on prose and code, where most
 * requests are; and within 3x on the classes a word-free estimate cannot know better (random
 * strings, CJK, other scripts, emoji), bar single words and characters. The tokenizer's counts
 * come from o200k-counts.ts.
 */

/** The most the estimate may be above o200k, by class; floors hold for every class. */
const CEILINGS: Partial<Record<TextClass, number>> = {
  english: 1.35,
  german: 1.35,
  latin: 3,
  code: 1.35,
  json: 3,
  mixed: 3,
  base64: 3,
  hex: 3,
  random: 3,
  cjk: 3,
  scripts: 3,
  emoji: 3,
}

interface Measured extends Sample {
  estimate: number
  actual: number
  ratio: number
}

function measure(sample: Sample): Measured {
  const estimate = estimateTextTokens(sample.text)
  const actual = o200kCount(sample.text)
  return { ...sample, estimate, actual, ratio: estimate / actual }
}

const measured = [...corpus(), ...repositorySamples()].map(measure)
const classes = [...new Set(measured.map((sample) => sample.textClass))]

const describeRatio = (sample: Measured) => `${sample.name}: ${sample.estimate} for ${sample.actual} (${sample.ratio.toFixed(2)}x)`

describe('token estimate against o200k', () => {
  for (const textClass of classes) {
    const samples = measured.filter((sample) => sample.textClass === textClass)
    const ceiling = CEILINGS[textClass]

    test(`${textClass}: never below, on each of ${samples.length} samples`, () => {
      expect(samples.filter((sample) => sample.estimate < sample.actual).map(describeRatio)).toEqual([])
    })

    if (ceiling !== undefined) {
      test(`${textClass}: at most ${ceiling}x`, () => {
        expect(samples.filter((sample) => sample.ratio > ceiling).map(describeRatio)).toEqual([])
      })
    }
  }

  afterAll(() => {
    const rows = classes.map((textClass) => {
      const ratios = measured.filter((sample) => sample.textClass === textClass).map((sample) => sample.ratio)
      return `${textClass.padEnd(8)} ${String(ratios.length).padStart(3)} samples  ${Math.min(...ratios).toFixed(2)}x to ${Math.max(...ratios).toFixed(2)}x`
    })
    console.log(`estimate / o200k by class:\n${rows.join('\n')}`)
    if (tokenized.texts > 0) console.log(`${tokenized.texts} texts were tokenized afresh: run bun test/billing/o200k-counts.ts to store their counts`)
  })
})

describe('token estimate', () => {
  test('nothing costs nothing; every piece of text costs at least a token', () => {
    expect(estimateTextTokens('')).toBe(0)
    expect(estimateTextTokens(' ')).toBe(1)
    expect(estimateTextTokens('a')).toBe(1)
  })

  test('a German compound costs what its parts do, a random string more than a word of its length', () => {
    expect(estimateTextTokens('Donaudampfschifffahrtsgesellschaftskapitän')).toBeGreaterThanOrEqual(13)
    expect(estimateTextTokens('kqzvxplmwr')).toBeGreaterThan(estimateTextTokens('background'))
  })

  test('German prose costs more than English prose of the same length', () => {
    const english = 'The captain stood at the rail and looked at the grey water drifting past the hull of the boat.'
    const german = 'Der Kapitän stand an der Reling und blickte auf das graue Wasser, das sich träge vorbeischob.'
    expect(estimateTextTokens(german)).toBeGreaterThan(estimateTextTokens(english))
  })

  test('a chat request adds framing per message, images a fixed allowance', () => {
    const text = estimateChatInputTokens({ messages: [{ role: 'user', content: 'hello there' }] })
    const withImage = estimateChatInputTokens({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello there' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
    })
    expect(text).toBeGreaterThan(estimateTextTokens('hello there'))
    expect(withImage - text).toBeGreaterThanOrEqual(1000)
  })

  test('numbers in JSON values count by their digits, never below the tokenizer', () => {
    for (const value of JSON_NUMBERS) {
      expect(estimateValueTokens({ n: value }) - estimateTextTokens('n')).toBeGreaterThanOrEqual(o200kCount(String(value)))
    }
  })
})

describe('token estimate of a large request', () => {
  const english = corpus().find((sample) => sample.textClass === 'english')?.text ?? ''
  const utf8 = (text: string) => Buffer.byteLength(text, 'utf8')

  test('past the scan budget a text is counted by its bytes, never below o200k on any sample', () => {
    const below = measured.filter((sample) => boundedTextTokens(sample.text, scanBudget(0)) < sample.actual).map(describeRatio)
    expect(below).toEqual([])
    for (const sample of measured) expect(boundedTextTokens(sample.text, scanBudget(0))).toBe(utf8(sample.text))
  })

  test('within the budget the scan is used, and the budget shrinks by what it read', () => {
    const budget = scanBudget(english.length + 10)
    expect(boundedTextTokens(english, budget)).toBe(estimateTextTokens(english))
    expect(budget.characters).toBe(10)
    expect(boundedTextTokens(english, budget)).toBe(utf8(english))
    expect(budget.characters).toBe(10)
  })

  test('one long string is counted by its bytes, not scanned', () => {
    const long = english.repeat(Math.ceil((SCANNED_CHARACTERS_PER_REQUEST + 1) / english.length))
    expect(estimateValueTokens(long)).toBe(utf8(long))
    expect(estimateChatInputTokens({ messages: [{ role: 'user', content: long }] })).toBe(3 + 4 + estimateTextTokens('content') + utf8(long))
  })

  test('the budget is shared by every part of a request: many strings under it each cost no more scanning than one long one', () => {
    const chunk = english.repeat(Math.ceil(100_000 / english.length)).slice(0, 100_000)
    const scanned = Math.floor(SCANNED_CHARACTERS_PER_REQUEST / (chunk.length + 'content'.length))
    const messages = Array.from({ length: 10 }, () => ({ role: 'user', content: chunk }))
    const expected = 3 + 10 * 4 + 10 * estimateTextTokens('content') + scanned * estimateTextTokens(chunk) + (10 - scanned) * utf8(chunk)
    expect(estimateChatInputTokens({ messages })).toBe(expected)
    // The byte count is above the scan's figure, so holds only grow past the budget.
    expect(utf8(chunk)).toBeGreaterThan(estimateTextTokens(chunk))
  })
})
