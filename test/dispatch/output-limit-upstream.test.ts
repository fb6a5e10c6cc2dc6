import { beforeEach, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * An omitted output limit is the model's maximum, upstream and in the hold alike
 * (docs/billing.md#holds): every OpenAI-format route is sent the number its hold was sized for, in the field its API
 * reads, so no upstream falls back on a default of its own. The mock's servers are compatible
 * servers: chat bodies carry `max_tokens` (openai-output-limit.test.ts covers OpenAI's own host).
 */
const hi = [{ role: 'user', content: 'hi' }]
const FAILED = { kind: 'error' as const, status: 500 }

for (const kind of testDatabases) {
  describe(`output limit sent upstream when the client names none (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)
    beforeEach(() => suite.upstream.reset())

    /** The limits each upstream request carried, with its path and model. */
    const sent = () =>
      suite.upstream.received.map((request) => ({
        path: request.path,
        model: request.body.model,
        limits: Object.fromEntries(Object.entries(request.body).filter(([field]) => field.startsWith('max_'))),
      }))

    for (const stream of [false, true]) {
      test(`chat, native${stream ? ', streamed' : ''}: the model's maximum as max_tokens`, async () => {
        const { key } = await suite.harness.key()
        const reply = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/cheap', messages: hi, stream } })
        expect(reply.status).toBe(200)
        expect(sent()).toEqual([{ path: '/v1/chat/completions', model: 'cheap-upstream', limits: { max_tokens: 1000 } }])
      })
    }

    test('chat through an alias: every failover route is sent its own model maximum', async () => {
      suite.upstream.script(FAILED, FAILED)
      const { key } = await suite.harness.key()
      const reply = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'tollgate/best', messages: hi } })
      expect(reply.status).toBe(200)
      expect(sent()).toEqual([
        { path: '/v1/chat/completions', model: 'smart-a', limits: { max_tokens: 4000 } },
        { path: '/v1/chat/completions', model: 'smart-b', limits: { max_tokens: 4000 } },
        { path: '/v1/chat/completions', model: 'cheap-upstream', limits: { max_tokens: 1000 } },
      ])
    })

    for (const stream of [false, true]) {
      test(`responses, native${stream ? ', streamed' : ''}: the model's maximum as max_output_tokens`, async () => {
        const { key } = await suite.harness.key()
        const reply = await suite.harness.call('POST', '/v1/responses', { headers: bearer(key), body: { model: 'test/cheap', input: 'hi', stream } })
        expect(reply.status).toBe(200)
        expect(sent()).toEqual([{ path: '/v1/responses', model: 'cheap-upstream', limits: { max_output_tokens: 1000 } }])
      })

      test(`responses, translated to chat${stream ? ', streamed' : ''}: the model's maximum as max_tokens`, async () => {
        const { key } = await suite.harness.key()
        const reply = await suite.harness.call('POST', '/v1/responses', { headers: bearer(key), body: { model: 'test/chat-only', input: 'hi', stream } })
        expect(reply.status).toBe(200)
        expect(sent()).toEqual([{ path: '/v1/chat/completions', model: 'chat-only-b', limits: { max_tokens: 1000 } }])
      })
    }

    test("messages failing over from a native route to a translated one: the client's max_tokens", async () => {
      suite.upstream.script(FAILED)
      const { key } = await suite.harness.key()
      const reply = await suite.harness.call('POST', '/v1/messages', {
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: { model: 'anthropic/claude-mixed', max_tokens: 300, messages: hi },
      })
      expect(reply.status).toBe(200)
      expect(sent()).toEqual([
        { path: '/v1/messages', model: 'mixed-native', limits: { max_tokens: 300 } },
        { path: '/v1/chat/completions', model: 'mixed-b', limits: { max_tokens: 300 } },
      ])
    })

    // Last: the provider is remembered as chat-only from then on.
    test('responses on a server without the Responses API: the switch to chat carries the maximum', async () => {
      suite.upstream.script({ kind: 'error', status: 404, body: { detail: 'Not Found' } })
      const { key } = await suite.harness.key()
      const reply = await suite.harness.call('POST', '/v1/responses', { headers: bearer(key), body: { model: 'test/cheap', input: 'hi' } })
      expect(reply.status).toBe(200)
      expect(sent()).toEqual([
        { path: '/v1/responses', model: 'cheap-upstream', limits: { max_output_tokens: 1000 } },
        { path: '/v1/chat/completions', model: 'cheap-upstream', limits: { max_tokens: 1000 } },
      ])
    })
  })
}
