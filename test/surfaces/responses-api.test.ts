import { beforeEach, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, type TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

/**
 * How /v1/responses reaches an `openai` provider (docs/configuration.md#responses-api-on-openai-providers): natively unless
 * `responsesApi: false`; left unset, a 404 or 405 at `/responses` switches the call to chat
 * completions on the same route, under the same hold, and the provider is remembered as
 * chat-only; `responsesApi: true` makes that 404 the client's error.
 *
 * Here `b` (test/chat-only) is left to detect, `a` (test/cheap) says `false` and `sluggish`
 * (test/slow, on server a, then b) says `true`. The memory lives with the loaded config, so
 * each test starts a gateway of its own on the shared database.
 */
const NOT_FOUND = { detail: 'Not Found' }

for (const kind of testDatabases) {
  describe(`Responses API detection (${kind.kind})`, () => {
    const settings = { a: { responsesApi: false }, b: { responsesApi: undefined }, sluggish: { responsesApi: true } }
    const suite = gatewaySuite(kind, { secondUpstream: true, providerSettings: settings, gateway: false })
    const a = suite.upstream
    const b = suite.secondUpstream
    beforeEach(() => {
      a.reset()
      b.reset()
    })

    /** A gateway that has learnt nothing yet about which upstreams serve the Responses API. */
    const freshGateway = (): TestGateway => suite.instance()
    const respond = (harness: TestGateway, key: string, body: object) =>
      harness.call('POST', '/v1/responses', { headers: bearer(key), body: { input: 'Say hi.', ...body } })
    const ledgerOf = async (harness: TestGateway, requestId: string | null) =>
      (await harness.admin('GET', `/ledger?request_id=${requestId}`)).json.data.map((entry: { kind: string }) => entry.kind).sort()

    test('unset: a 404 at /responses is translated through chat completions under one hold, and remembered', async () => {
      const harness = freshGateway()
      const { key } = await harness.key()
      b.script({ kind: 'error', status: 404, body: NOT_FOUND }, { text: 'Translated.', usage: { prompt_tokens: 20, completion_tokens: 3 } })
      const first = await respond(harness, key, { model: 'test/chat-only' })
      expect(first.status).toBe(200)
      expect(first.json).toMatchObject({
        object: 'response',
        model: 'test/chat-only',
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'Translated.' }] }],
      })
      expect(first.json.usage.cost).toBe((20 * 1 + 3 * 4) / 1e6)
      expect(b.received.map((request) => request.path)).toEqual(['/v1/responses', '/v1/chat/completions'])
      // The same call switched mode on the same route: one hold, one charge, the rest released.
      expect(await ledgerOf(harness, first.headers.get('x-request-id'))).toEqual(['charge', 'hold', 'release'])

      // Remembered: later calls, streamed or not, go straight to chat completions.
      b.reset()
      const second = await respond(harness, key, { model: 'test/chat-only' })
      expect(second.status).toBe(200)
      const streamed = await respond(harness, key, { model: 'test/chat-only', stream: true })
      expect(streamed.text).toContain('event: response.completed')
      expect(b.received.map((request) => request.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions'])
      await expectBooksBalance(suite.database.db)
    })

    test('unset: a 405 streams the translation; the native answer of a provider that has the API is kept', async () => {
      const harness = freshGateway()
      const { key } = await harness.key()
      b.script({ kind: 'error', status: 405, body: NOT_FOUND }, { text: 'Streamed translation.' })
      const reply = await respond(harness, key, { model: 'test/chat-only', stream: true })
      expect(reply.text).toContain('event: response.completed')
      expect(reply.text).toContain('Streamed translation.')
      expect(b.received.map((request) => request.path)).toEqual(['/v1/responses', '/v1/chat/completions'])

      // Other errors are not a missing endpoint: a 400 at /responses is the client's, and nothing switches.
      b.reset()
      const otherGateway = freshGateway()
      b.script({ kind: 'error', status: 400, body: { error: { message: 'bad input', type: 'invalid_request_error', param: 'input', code: 'invalid_value' } } })
      expectError(await respond(otherGateway, key, { model: 'test/chat-only' }), 400, 'invalid_value')
      b.script({ text: 'Native.' })
      expect((await respond(otherGateway, key, { model: 'test/chat-only' })).status).toBe(200)
      expect(b.received.map((request) => request.path)).toEqual(['/v1/responses', '/v1/responses'])
      await expectBooksBalance(suite.database.db)
    })

    test('unset: server-side state cannot move to a translation, so the 404 is a 400 naming the field, not billed', async () => {
      const harness = freshGateway()
      const { key, accountId } = await harness.key()
      b.script({ kind: 'error', status: 404, body: NOT_FOUND })
      const refused = await respond(harness, key, { model: 'test/chat-only', previous_response_id: 'resp_1' })
      expectError(refused, 400, 'invalid_request')
      expect(refused.json.error.param).toBe('previous_response_id')
      expect(b.received.map((request) => request.path)).toEqual(['/v1/responses'])
      // Remembered too: the next stateful call is refused before any upstream call.
      b.reset()
      expectError(await respond(harness, key, { model: 'test/chat-only', store: true }), 400, 'invalid_request')
      expect(b.received).toHaveLength(0)
      expect((await harness.admin('GET', `/accounts/${accountId}`)).json.wallet).toEqual({ balance: 100, held: 0, available: 100 })
    })

    test('true: a 404 at /responses is the client error it is, with no fallback and no failover', async () => {
      const harness = freshGateway()
      const { key, accountId } = await harness.key()
      a.script({ kind: 'error', status: 404, body: { error: { message: 'no such route', type: 'invalid_request_error', param: null, code: null } } })
      const reply = await respond(harness, key, { model: 'test/slow' })
      expectError(reply, 404, 'upstream_error')
      expect(reply.json.error.message).toBe('no such route')
      expect(a.received.map((request) => request.path)).toEqual(['/v1/responses'])
      expect(b.received).toHaveLength(0)
      expect((await harness.admin('GET', `/accounts/${accountId}`)).json.wallet).toEqual({ balance: 100, held: 0, available: 100 })
      // Not remembered either: the next call is native again.
      a.reset()
      expect((await respond(harness, key, { model: 'test/slow' })).status).toBe(200)
      expect(a.received.map((request) => request.path)).toEqual(['/v1/responses'])
    })

    test('false: /responses is never called', async () => {
      const harness = freshGateway()
      const { key } = await harness.key()
      for (const stream of [false, true]) expect((await respond(harness, key, { model: 'test/cheap', stream })).status).toBe(200)
      expect(a.received.map((request) => request.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions'])
      // State needs the native API, which this provider has said it has not.
      expectError(await respond(harness, key, { model: 'test/cheap', store: true }), 400, 'invalid_request')
      expect(a.received).toHaveLength(2)
    })
  })
}
