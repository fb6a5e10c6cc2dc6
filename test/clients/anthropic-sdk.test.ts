import { beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import AnthropicZero from 'anthropic-sdk-0'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'
import type { MockUpstream } from '../upstream/mock-upstream'

/**
 * The official @anthropic-ai/sdk, current 1.x (Bearer, anthropic-version 2026-10-21) and 0.x
 * (x-api-key, 2023-06-01), pointed at the gateway over real HTTP, unchanged.
 */
const sdks = [
  { name: '1.x', Client: Anthropic, header: 'authorization', version: '2026-10-21' },
  { name: '0.x', Client: AnthropicZero as unknown as typeof Anthropic, header: 'x-api-key', version: '2023-06-01' },
] as const

describe('official Anthropic clients', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true })
  let upstream: MockUpstream
  let key: string

  beforeAll(async () => {
    upstream = served.upstream
    key = (await served.harness.key()).key
  })

  for (const { name, Client, header, version } of sdks) {
    describe(`SDK ${name}`, () => {
      const client = () => new Client({ apiKey: key, baseURL: served.origin, maxRetries: 0 })

      test('messages.create, sending its own credential header', async () => {
        upstream.script({ text: 'Hello from upstream.', usage: { prompt_tokens: 9, completion_tokens: 4 } })
        const message = await client().messages.create({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
        expect(message.content).toEqual([{ type: 'text', text: 'Hello from upstream.' } as never])
        expect((message.usage as unknown as { cost: number }).cost).toBe((9 * 3 + 4 * 15) / 1e6)
        expect(served.lastHeaders[header]).toContain(key)
        expect(served.lastHeaders['anthropic-version']).toBe(version)
        // Upstream, the provider's own key, whatever the client sent.
        expect(upstream.received.at(-1)!.headers['x-api-key']).toBe('sk-ant-a')
      })

      test('messages.stream to the final message, with a tool call', async () => {
        upstream.script({ text: 'Let me check.', toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] })
        const stream = client().messages.stream({
          model: 'claude-test',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'weather?' }],
          tools: [{ name: 'get_weather', description: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
        })
        let text = ''
        stream.on('text', (delta) => (text += delta))
        const final = await stream.finalMessage()
        expect(text).toBe('Let me check.')
        expect(final.stop_reason).toBe('tool_use')
        expect(final.content.at(-1)).toMatchObject({ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } })
      })

      test('messages.stream on a translated route (an OpenAI-format upstream)', async () => {
        // An OpenAI-format tool call carries no text (content: null).
        upstream.script({ toolCalls: [{ id: 'call_7', name: 'lookup', arguments: '{"q":"tollgate"}' }] })
        const final = await client()
          .messages.stream({
            model: 'claude-bridge',
            max_tokens: 64,
            messages: [{ role: 'user', content: 'look it up' }],
            tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
          })
          .finalMessage()
        expect(final.content).toMatchObject([{ type: 'tool_use', id: 'call_7', name: 'lookup', input: { q: 'tollgate' } }])
        expect(final.stop_reason).toBe('tool_use')
        expect(upstream.received.at(-1)!.path).toBe('/v1/chat/completions')
      })

      test('messages.countTokens', async () => {
        const counted = await client().messages.countTokens({ model: 'claude-test', messages: [{ role: 'user', content: 'How many tokens is this?' }] })
        expect(counted.input_tokens).toBeGreaterThan(5)
        expect(counted.input_tokens).toBeLessThan(30)
      })

      test('the SDK reads the request id from request-id, the same as x-request-id: answers, streams and errors', async () => {
        upstream.script({ text: 'Hi.' })
        const created = await client()
          .messages.create({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
          .withResponse()
        expect(created.request_id).toMatch(/^req/)
        expect(created.request_id).toBe(created.response.headers.get('x-request-id'))
        expect((created.data as unknown as { _request_id: string })._request_id).toBe(created.request_id!)

        upstream.script({ text: 'Streamed.' })
        const stream = client().messages.stream({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
        await stream.finalMessage()
        expect(stream.request_id).toMatch(/^req/)

        const refused = (await client()
          .messages.create({ model: 'claude-nothing', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
          .catch((error: unknown) => error)) as InstanceType<typeof Client.APIError>
        expect(refused.requestID).toMatch(/^req/)
        expect(refused.requestID).toBe(refused.headers?.get('x-request-id') ?? null)
      })

      test('errors arrive as the SDK error classes', async () => {
        const unknown = await client()
          .messages.create({ model: 'claude-nothing', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
          .catch((error: unknown) => error)
        expect(unknown).toBeInstanceOf(Client.NotFoundError)
        const wrongKey = await new Client({ apiKey: 'tollgate_sk_prod_wrong', baseURL: served.origin, maxRetries: 0 }).messages
          .countTokens({ model: 'claude-test', messages: [{ role: 'user', content: 'hi' }] })
          .catch((error: unknown) => error)
        expect(wrongKey).toBeInstanceOf(Client.AuthenticationError)
      })
    })
  }
})
