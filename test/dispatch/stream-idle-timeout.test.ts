import { beforeEach, describe, expect, test } from 'bun:test'
import { estimateTextTokens } from '../../src/billing/estimator'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'
import { mockCatalogEnv } from '../support/mock-catalog'
import type { ReceivedRequest } from '../upstream/mock-upstream'

const hi = [{ role: 'user', content: 'Say hi.' }]
const IDLE_MS = 300

/** The events of a streamed reply: [event name or '', data as text]. */
function eventsOf(text: string): [string, string][] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => [/^event: (.*)$/m.exec(block)?.[1] ?? '', /^data: (.*)$/m.exec(block)?.[1] ?? ''])
}

/** The mock sees the gateway close the silent stream's connection (it may take a moment to notice). */
async function expectAborted(request: ReceivedRequest | undefined): Promise<void> {
  for (let i = 0; i < 50 && !request?.aborted; i++) await Bun.sleep(10)
  expect(request?.aborted).toBe(true)
}

/**
 * `streamIdleTimeoutMs` (docs/configuration.md#provider-timeouts): an upstream stream that goes silent is ended with the
 * surface's own error event (upstream_timeout), its connection is closed, and the call is
 * settled for what was streamed, like an abandoned stream, not released like a broken one.
 */
for (const kind of testDatabases) {
  describe(`stream idle timeout (${kind.kind})`, () => {
    const idle = { streamIdleTimeoutMs: IDLE_MS }
    const suite = gatewaySuite(kind, {
      secondUpstream: true,
      env: ({ upstream, second }) => mockCatalogEnv(upstream.baseUrl, (second ?? upstream).baseUrl, { a: idle, b: idle, native: idle }),
    })
    const a = suite.upstream
    const b = suite.secondUpstream
    beforeEach(() => {
      a.reset()
      b.reset()
    })

    const post = (path: string, headers: Record<string, string>, body: object) => suite.harness.call('POST', path, { headers, body })
    const ledger = async (keyId: string) => (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as any[]

    /** One charge for the streamed part, the rest of the hold released; the wallet shows the charge. */
    async function expectChargedForWhatStreamed(keyId: string, accountId: string) {
      // The client may be answered before the settlement lands (docs/billing.md#database-outages): on a busy machine, wait for it.
      let entries = await ledger(keyId)
      for (let waited = 0; waited < 50 && entries.length < 3; waited++) {
        await Bun.sleep(100)
        entries = await ledger(keyId)
      }
      expect(entries.map((entry) => entry.kind).sort()).toEqual(['charge', 'hold', 'release'])
      const hold = entries.find((entry) => entry.kind === 'hold')
      const charge = entries.find((entry) => entry.kind === 'charge')
      expect(charge.amount).toBeGreaterThan(0)
      expect(charge.amount).toBeLessThan(hold.amount)
      expect(charge.usage.output_tokens).toBeGreaterThan(0)
      const wallet = (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet.held).toBe(0)
      expect(wallet.balance).toBeCloseTo(100 - charge.amount, 6)
      return charge
    }

    test('chat: a final error chunk with upstream_timeout and no [DONE]; the upstream is cut; billed for the streamed chunks', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      a.script({ text: 'one two three four five six', silentAfterChunks: 2 })
      const started = Date.now()
      const reply = await post('/v1/chat/completions', bearer(key), { model: 'test/cheap', messages: hi, stream: true })
      expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS - 20)
      const data = eventsOf(reply.text).map(([, payload]) => payload)
      expect(data).not.toContain('[DONE]')
      expect(
        data
          .filter((payload) => payload.includes('"content"'))
          .map((payload) => JSON.parse(payload).choices[0].delta.content)
          .join(''),
      ).toBe('one two ')
      expect(JSON.parse(data.at(-1)!)).toEqual({ error: { message: expect.any(String), type: 'timeout_error', param: null, code: 'upstream_timeout' } })
      await expectAborted(a.received[0])
      const charge = await expectChargedForWhatStreamed(keyId, accountId)
      expect(charge.usage.source).toBe('estimate')
      await expectBooksBalance(suite.database.db)
    })

    test('messages: event: error with upstream_timeout after the streamed blocks; billed for them', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      // message_start, content_block_start, ping, then two deltas.
      a.script({ text: 'one two three four five six', silentAfterChunks: 3 })
      const reply = await post('/v1/messages', { 'x-api-key': key }, { model: 'claude-test', max_tokens: 200, messages: hi, stream: true })
      const events = eventsOf(reply.text)
      expect(events.map(([name]) => name)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'error'])
      expect(JSON.parse(events.at(-1)![1])).toEqual({ type: 'error', error: { type: 'timeout_error', message: expect.any(String), code: 'upstream_timeout' } })
      await expectAborted(a.received[0])
      const charge = await expectChargedForWhatStreamed(keyId, accountId)
      // message_start reported the input tokens; the output is the gateway's count of the two deltas.
      expect(charge.usage).toMatchObject({ source: 'estimate', output_tokens: estimateTextTokens('one ') + estimateTextTokens('two ') })
      await expectBooksBalance(suite.database.db)
    })

    test('responses (native): an error event with upstream_timeout; billed for the streamed deltas', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      a.script({ text: 'one two three four five six', silentAfterChunks: 3 })
      const reply = await post('/v1/responses', bearer(key), { model: 'test/cheap', input: 'Say hi.', stream: true })
      const events = eventsOf(reply.text)
      expect(events.filter(([name]) => name === 'response.output_text.delta')).toHaveLength(1)
      expect(events.at(-1)![0]).toBe('error')
      expect(JSON.parse(events.at(-1)![1])).toMatchObject({ type: 'error', code: 'upstream_timeout' })
      expect(a.received[0]!.path).toBe('/v1/responses')
      await expectAborted(a.received[0])
      await expectChargedForWhatStreamed(keyId, accountId)
      await expectBooksBalance(suite.database.db)
    })

    test('translated (messages on an OpenAI-format upstream): event: error with upstream_timeout; billed for the streamed text', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      a.script({ text: 'one two three four five six', silentAfterChunks: 2 })
      const reply = await post('/v1/messages', { 'x-api-key': key }, { model: 'anthropic/claude-bridge', max_tokens: 200, messages: hi, stream: true })
      const events = eventsOf(reply.text)
      expect(a.received[0]!.path).toBe('/v1/chat/completions')
      expect(events.some(([name]) => name === 'content_block_delta')).toBe(true)
      expect(events.at(-1)![0]).toBe('error')
      expect(JSON.parse(events.at(-1)![1])).toMatchObject({ type: 'error', error: { type: 'timeout_error', code: 'upstream_timeout' } })
      await expectAborted(a.received[0])
      await expectChargedForWhatStreamed(keyId, accountId)
      await expectBooksBalance(suite.database.db)
    })

    test('translated (responses on a chat-only upstream): response.failed with upstream_timeout; billed', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      b.script({ text: 'one two three four five six', silentAfterChunks: 2 })
      const reply = await post('/v1/responses', bearer(key), { model: 'test/chat-only', input: 'Say hi.', stream: true })
      const events = eventsOf(reply.text)
      expect(b.received[0]!.path).toBe('/v1/chat/completions')
      expect(events.at(-1)![0]).toBe('response.failed')
      expect(JSON.parse(events.at(-1)![1]).response).toMatchObject({ status: 'failed', error: { code: 'upstream_timeout' } })
      await expectAborted(b.received[0])
      await expectChargedForWhatStreamed(keyId, accountId)
      await expectBooksBalance(suite.database.db)
    })

    test('a slow stream whose every pause is shorter than the limit is not cut', async () => {
      const { key, id: keyId } = await suite.harness.key()
      a.script({ text: 'one two three four', chunkDelayMs: IDLE_MS / 2, usage: { prompt_tokens: 10, completion_tokens: 4 } })
      const started = Date.now()
      const reply = await post('/v1/chat/completions', bearer(key), { model: 'test/cheap', messages: hi, stream: true })
      expect(Date.now() - started).toBeGreaterThan(IDLE_MS)
      expect(eventsOf(reply.text).at(-1)![1]).toBe('[DONE]')
      expect((await ledger(keyId)).find((entry) => entry.kind === 'charge').usage).toMatchObject({ source: 'provider', output_tokens: 4 })
    })

    test('a whole (non-streamed) answer whose body goes silent: 504 upstream_timeout, the upstream is cut, nothing billed', async () => {
      const { key, id: keyId } = await suite.harness.key()
      a.script({ silentAfterChunks: 0 })
      const reply = await post('/v1/chat/completions', bearer(key), { model: 'test/cheap', messages: hi })
      expect(reply.status).toBe(504)
      expect(reply.json.error.code).toBe('upstream_timeout')
      await expectAborted(a.received[0])
      expect((await ledger(keyId)).map((entry) => entry.kind)).toEqual(['release', 'hold'])
      await expectBooksBalance(suite.database.db)
    })

    for (const [surface, path, headers, model] of [
      ['chat', '/v1/chat/completions', 'bearer', 'test/cheap'],
      ['messages', '/v1/messages', 'x-api-key', 'claude-test'],
    ] as const)
      test(`${surface}: a stream whose last event came but whose body the upstream never ends: the client has it all, billed, and the upstream is closed after one idle timeout`, async () => {
        const { key, id: keyId, accountId } = await suite.harness.key()
        a.script({ text: 'one two three', openAfterEnd: true, usage: { prompt_tokens: 10, completion_tokens: 3 } })
        const reply = await post(path, headers === 'bearer' ? bearer(key) : { 'x-api-key': key }, { model, max_tokens: 200, messages: hi, stream: true })
        const last = eventsOf(reply.text).at(-1)
        expect(surface === 'chat' ? last?.[1] : last?.[0]).toBe(surface === 'chat' ? '[DONE]' : 'message_stop')
        await expectAborted(a.received[0])
        let entries = await ledger(keyId)
        for (let waited = 0; waited < 50 && entries.length < 3; waited++) {
          await Bun.sleep(100)
          entries = await ledger(keyId)
        }
        expect(entries.find((entry) => entry.kind === 'charge').usage).toMatchObject({ source: 'provider', output_tokens: 3 })
        expect((await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet.held).toBe(0)
        await expectBooksBalance(suite.database.db)
      })

    test('a broken stream is still released, unbilled', async () => {
      const { key, id: keyId } = await suite.harness.key()
      a.script({ text: 'one two three four', cutAfterChunks: 2 })
      const reply = await post('/v1/chat/completions', bearer(key), { model: 'test/cheap', messages: hi, stream: true })
      expect(JSON.parse(eventsOf(reply.text).at(-1)![1]).error.code).toBe('upstream_error')
      expect((await ledger(keyId)).map((entry) => entry.kind)).toEqual(['release', 'hold'])
      await expectBooksBalance(suite.database.db)
    })
  })
}
