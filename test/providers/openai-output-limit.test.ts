import { describe, expect, test } from 'bun:test'
import type { UpstreamTarget } from '../../src/providers/adapter'
import { openAiAdapter } from '../../src/providers/openai'
import { providerConfig } from './contract'
import { PROMPT } from './prompt'

/**
 * The output limit a hold was sized for goes upstream in the field each chat completions server
 * reads: OpenAI's own API `max_completion_tokens` (its reasoning models refuse `max_tokens`),
 * compatible servers `max_tokens` (Mistral refuses the other). A client's own field is kept.
 */
function sentBodies(baseUrl: string) {
  const bodies: Record<string, unknown>[] = []
  const adapter = openAiAdapter(async (_url, init) => {
    bodies.push(JSON.parse(String(init.body)))
    return Response.json({})
  })
  const target: UpstreamTarget = {
    provider: providerConfig({ api: 'openai', baseUrl, credential: 'sk-provider' }),
    model: 'model-x',
    signal: new AbortController().signal,
    headers: {},
  }
  return { adapter, target, bodies }
}

const FIELDS: [string, string][] = [
  ['https://api.openai.com/v1', 'max_completion_tokens'],
  ['https://my-resource.openai.azure.com/openai/v1', 'max_completion_tokens'],
  ['https://api.mistral.ai/v1', 'max_tokens'],
  ['https://api.groq.com/openai/v1', 'max_tokens'],
  ['http://127.0.0.1:11434/v1', 'max_tokens'],
]

describe('chat output limit sent upstream', () => {
  for (const [baseUrl, field] of FIELDS) {
    test(`${new URL(baseUrl).hostname}: ${field}, natively and by translation`, async () => {
      const { adapter, target, bodies } = sentBodies(baseUrl)
      const messages = [{ role: 'user', content: 'hi' }]
      await adapter.chat?.send(target, { model: 'client-model', messages }, 700)
      await adapter.translate?.send(target, { ...PROMPT, maxOutputTokens: 700 })
      expect(bodies).toHaveLength(2)
      for (const body of bodies) {
        expect(body[field]).toBe(700)
        expect(Object.keys(body).filter((key) => key.startsWith('max_'))).toEqual([field])
      }
    })
  }

  test("a client's own limit goes as it came, in its own field", async () => {
    const { adapter, target, bodies } = sentBodies('https://api.openai.com/v1')
    const messages = [{ role: 'user', content: 'hi' }]
    await adapter.chat?.send(target, { model: 'client-model', messages, max_tokens: 20 }, 700)
    await adapter.chat?.send(target, { model: 'client-model', messages, max_completion_tokens: 30 }, 700)
    expect(bodies).toEqual([
      { model: 'model-x', messages, max_tokens: 20 },
      { model: 'model-x', messages, max_completion_tokens: 30 },
    ])
  })
})
