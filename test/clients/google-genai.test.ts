import { beforeAll, describe, expect, test } from 'bun:test'
import { ApiError, GoogleGenAI, Type } from '@google/genai'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'
import type { MockUpstream } from '../upstream/mock-upstream'

/**
 * The official @google/genai SDK pointed at the gateway over real HTTP, unchanged
 * (docs/api.md#gemini-api): each route kind, with exact charges.
 */

/** Each kind of route a chat model may have, the model as the SDK names it, and its prices per million tokens. */
const ROUTES = [
  { kind: 'gemini', model: 'gemini-test', upstreamPath: '/v1beta/models/gemini-test-a:', input: 0.3, output: 2.5 },
  { kind: 'OpenAI-format', model: 'test/cheap', upstreamPath: '/v1/chat/completions', input: 1, output: 2 },
  { kind: 'Anthropic', model: 'claude-test', upstreamPath: '/v1/messages', input: 3, output: 15 },
] as const

const weatherTool = {
  functionDeclarations: [
    { name: 'get_weather', description: 'The weather in a city', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } },
  ],
}

describe('official Google Gen AI SDK', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true })
  let upstream: MockUpstream
  let key: string
  let accountId: string

  beforeAll(async () => {
    upstream = served.upstream
    ;({ key, accountId } = await served.harness.key())
  })

  // SDK 3.x defaults to the v1 API; the gateway serves Google's API under v1beta, as SDK 1.x and 2.x (and Gemini CLI) call it.
  const client = () => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: served.origin, apiVersion: 'v1beta' } })
  const balance = async () => (await served.harness.admin('GET', `/accounts/${accountId}`)).json.wallet.balance as number

  for (const route of ROUTES) {
    describe(`${route.kind} route`, () => {
      const cost = Math.ceil(100 * route.input + 20 * route.output) / 1e6

      test('generateContent: the text, the usage with the cost, the wallet charged exactly', async () => {
        const before = await balance()
        upstream.script({ text: 'Hello from upstream.', usage: { prompt_tokens: 100, completion_tokens: 20 } })
        const response = await client().models.generateContent({
          model: route.model,
          contents: 'hi',
          config: { systemInstruction: 'Be brief.', maxOutputTokens: 64 },
        })
        expect(response.text).toBe('Hello from upstream.')
        expect(response.usageMetadata).toMatchObject({ promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 })
        expect((response.usageMetadata as { cost?: number }).cost).toBe(cost)
        expect(upstream.received.at(-1)!.path.startsWith(route.upstreamPath)).toBe(true)
        expect(served.lastHeaders['x-goog-api-key']).toBe(key)
        expect(await balance()).toBeCloseTo(before - cost, 6)
      })

      test('generateContentStream: the chunks add up to the text; the last carries the cost', async () => {
        const before = await balance()
        upstream.script({ text: 'one two three four', usage: { prompt_tokens: 100, completion_tokens: 20 } })
        let text = ''
        let last: { usageMetadata?: unknown } | undefined
        for await (const chunk of await client().models.generateContentStream({ model: route.model, contents: 'count' })) {
          text += chunk.text ?? ''
          last = chunk
        }
        expect(text).toBe('one two three four')
        expect((last?.usageMetadata as { cost?: number } | undefined)?.cost).toBe(cost)
        expect(await balance()).toBeCloseTo(before - cost, 6)
      })

      test('a function-calling round trip', async () => {
        upstream.script({ toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Lima"}' }] })
        const question = { role: 'user', parts: [{ text: 'Weather in Lima?' }] }
        const first = await client().models.generateContent({ model: route.model, contents: [question], config: { tools: [weatherTool] } })
        expect(first.functionCalls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Lima' } })])
        upstream.script({ text: 'Sunny in Lima.' })
        const call = first.candidates?.[0]?.content
        const second = await client().models.generateContent({
          model: route.model,
          contents: [question, call!, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { forecast: 'sunny' } } }] }],
          config: { tools: [weatherTool] },
        })
        expect(second.text).toBe('Sunny in Lima.')
        expect(JSON.stringify(upstream.received.at(-1)!.body)).toContain('sunny')
      })

      test('countTokens: free, no upstream call', async () => {
        const before = await balance()
        const calls = upstream.received.length
        const counted = await client().models.countTokens({ model: route.model, contents: 'How many tokens is this?' })
        expect(counted.totalTokens).toBeGreaterThan(0)
        expect(upstream.received.length).toBe(calls)
        expect(await balance()).toBe(before)
      })
    })
  }

  test('errors reach the SDK as ApiError with the HTTP status and Google status word', async () => {
    const error = await client()
      .models.generateContent({ model: 'no-such-model', contents: 'hi' })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(404)
    expect((error as ApiError).message).toContain('NOT_FOUND')
  })

  test('embedContent on an embedding model: the vectors in order, billed', async () => {
    const before = await balance()
    const result = await client().models.embedContent({ model: 'gemini-embed', contents: ['first text', 'second text'], config: { outputDimensionality: 3 } })
    expect(result.embeddings).toHaveLength(2)
    expect(result.embeddings?.[1]?.values?.[0]).toBeCloseTo((result.embeddings?.[0]?.values?.[0] ?? 0) * 2, 6)
    expect(upstream.received.at(-1)!.body.requests.map((request: { content: { parts: { text: string }[] } }) => request.content.parts[0]!.text)).toEqual([
      'first text',
      'second text',
    ])
    expect(await balance()).toBeLessThan(before)
  })

  test('models.get and models.list', async () => {
    const model = await client().models.get({ model: 'gemini-test' })
    expect(model).toMatchObject({ name: 'models/google/gemini-test', outputTokenLimit: 1000 })
    const names: string[] = []
    for await (const listed of await client().models.list()) names.push(listed.name ?? '')
    expect(names).toContain('models/google/gemini-test')
  })
})
