import { beforeEach, describe, expect, test } from 'bun:test'
import { requestFingerprint } from '../../src/idempotency/fingerprint'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, type Reply, type TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

const hi = [{ role: 'user', content: 'Say hi.' }]

/** A request's ledger entries, by kind, for one key. */
async function kindsOf(harness: TestGateway, keyId: string): Promise<string[]> {
  const entries = (await harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as { kind: string }[]
  return entries.map((entry) => entry.kind)
}

async function chargesOf(harness: TestGateway, keyId: string): Promise<number> {
  return (await kindsOf(harness, keyId)).filter((kind) => kind === 'charge').length
}

/** Waits until `check` holds (at most 10 s), polling the database-backed state it reads. */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s')
    await Bun.sleep(20)
  }
}

function expectReplayOf(replay: Reply, first: Reply): void {
  expect(replay.status).toBe(first.status)
  expect(replay.headers.get('idempotent-replayed')).toBe('true')
  expect(replay.headers.get('x-request-id')).toBe(first.headers.get('x-request-id'))
  expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'))
  expect(replay.text).toBe(first.text)
}

for (const kind of testDatabases) {
  describe(`idempotent retries (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)
    const upstream = suite.upstream
    beforeEach(() => upstream.reset())

    const post = (path: string, key: string, body: unknown, idempotencyKey?: string) =>
      suite.harness.call('POST', path, { headers: { ...bearer(key), ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) }, body })

    test('the same key and request replay the first answer: same bytes and request id, one upstream call, one charge', async () => {
      const { key, id } = await suite.harness.key()
      upstream.script({ text: 'Only once.', usage: { prompt_tokens: 10, completion_tokens: 3 } })
      const first = await post('/v1/chat/completions', key, { model: 'test/cheap', messages: hi }, 'retry-1')
      expect(first.status).toBe(200)
      expect(first.headers.get('idempotent-replayed')).toBeNull()
      // The same JSON value with its keys in another order is the same request.
      const replay = await post('/v1/chat/completions', key, { messages: hi, model: 'test/cheap' }, 'retry-1')
      expectReplayOf(replay, first)
      expect(replay.json.choices[0].message.content).toBe('Only once.')
      expect(upstream.received).toHaveLength(1)
      expect(await kindsOf(suite.harness, id)).toEqual(['release', 'charge', 'hold'])
      // Without the header nothing changes: the same request is billed again.
      upstream.script({ text: 'Again.' })
      expect((await post('/v1/chat/completions', key, { model: 'test/cheap', messages: hi })).json.choices[0].message.content).toBe('Again.')
      expect(await chargesOf(suite.harness, id)).toBe(2)
    })

    test('a stream replays as a stream, byte for byte', async () => {
      const { key, id } = await suite.harness.key()
      upstream.script({ text: 'one two three four', usage: { prompt_tokens: 7, completion_tokens: 4 } })
      const body = { model: 'claude-test', max_tokens: 50, stream: true, messages: hi }
      const first = await post('/v1/messages', key, body, 'stream-key')
      expect(first.headers.get('content-type')).toStartWith('text/event-stream')
      expect(first.text).toContain('message_stop')
      const replay = await post('/v1/messages', key, body, 'stream-key')
      expectReplayOf(replay, first)
      // Anthropic's own id header is the original one too.
      expect(replay.headers.get('request-id')).toBe(first.headers.get('x-request-id'))
      expect(upstream.received).toHaveLength(1)
      expect(await chargesOf(suite.harness, id)).toBe(1)
    })

    test('another request under a used key is 422 idempotency_key_reused, in the surface envelope', async () => {
      const { key } = await suite.harness.key()
      await post('/v1/chat/completions', key, { model: 'test/cheap', messages: hi }, 'k')
      const other = await post('/v1/chat/completions', key, { model: 'test/cheap', messages: [{ role: 'user', content: 'Other.' }] }, 'k')
      expectError(other, 422, 'idempotency_key_reused')
      expect(other.json.error).toMatchObject({ type: 'invalid_request_error', param: 'Idempotency-Key' })
      await post('/v1/messages', key, { model: 'claude-test', max_tokens: 20, messages: hi }, 'm')
      expectError(await post('/v1/messages', key, { model: 'claude-test', max_tokens: 21, messages: hi }, 'm'), 422, 'idempotency_key_reused', 'messages')
      expect(upstream.received).toHaveLength(2)
    })

    test('a key that is not 1-255 visible ASCII characters is 400 invalid_request on Idempotency-Key, and nothing runs', async () => {
      const { key, id } = await suite.harness.key()
      for (const bad of ['', 'has space', 'x'.repeat(256), 'tab\there', 'é']) {
        const reply = await post('/v1/chat/completions', key, { model: 'test/cheap', messages: hi }, bad)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe('Idempotency-Key')
      }
      expectError(await post('/v1/messages', key, { model: 'claude-test', max_tokens: 20, messages: hi }, 'a b'), 400, 'invalid_request', 'messages')
      expect(upstream.received).toHaveLength(0)
      expect(await kindsOf(suite.harness, id)).toEqual([])
      expect((await post('/v1/chat/completions', key, { model: 'test/cheap', messages: hi }, '~'.repeat(255))).status).toBe(200)
    })

    test('a first call that ended without a 2xx answer frees its key: the retry runs for real', async () => {
      const { key, id } = await suite.harness.key()
      upstream.script({ kind: 'error', status: 500 }, { kind: 'error', status: 400 }, { text: 'Third time.' })
      const body = { model: 'test/cheap', messages: hi }
      expect((await post('/v1/chat/completions', key, body, 'flaky')).status).toBe(502)
      expect((await post('/v1/chat/completions', key, body, 'flaky')).status).toBe(400)
      const ok = await post('/v1/chat/completions', key, body, 'flaky')
      expect(ok.json.choices[0].message.content).toBe('Third time.')
      expect(upstream.received).toHaveLength(3)
      expect(await chargesOf(suite.harness, id)).toBe(1)
      // Refused before the upstream (no credit): freed as well.
      const poor = await suite.harness.key({ account_id: (await suite.harness.account(0)).id })
      expectError(await post('/v1/chat/completions', poor.key, body, 'broke'), 402, 'insufficient_balance')
      await suite.harness.admin('POST', `/accounts/${poor.accountId}/credits`, { amount: 10 })
      expect((await post('/v1/chat/completions', poor.key, body, 'broke')).status).toBe(200)
    })

    test('a key belongs to its caller and its path', async () => {
      const first = await suite.harness.key()
      const second = await suite.harness.key()
      upstream.script({ text: 'For the first.' }, { text: 'For the second.' })
      const body = { model: 'test/cheap', messages: hi }
      const one = await post('/v1/chat/completions', first.key, body, 'shared')
      const two = await post('/v1/chat/completions', second.key, body, 'shared')
      expect(one.json.choices[0].message.content).toBe('For the first.')
      expect(two.json.choices[0].message.content).toBe('For the second.')
      expect(two.headers.get('idempotent-replayed')).toBeNull()
      const embedded = await post('/v1/embeddings', first.key, { model: 'test/embed', input: 'hello' }, 'shared')
      expect(embedded.status).toBe(200)
      expect(embedded.headers.get('idempotent-replayed')).toBeNull()
      expect(upstream.received).toHaveLength(3)
    })

    test('while the first call runs, its key is 409 idempotency_key_in_use with Retry-After; then the replay', async () => {
      const { key, id } = await suite.harness.key()
      upstream.script({ text: 'Slow answer.', delayMs: 400 })
      const body = { model: 'test/cheap', messages: hi }
      const first = post('/v1/chat/completions', key, body, 'slow')
      await until(async () => upstream.received.length === 1)
      const busy = await post('/v1/chat/completions', key, body, 'slow')
      expectError(busy, 409, 'idempotency_key_in_use')
      expect(busy.json.error.type).toBe('invalid_request_error')
      expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      const answered = await first
      expectReplayOf(await post('/v1/chat/completions', key, body, 'slow'), answered)
      expect(await chargesOf(suite.harness, id)).toBe(1)
    })

    test('a client that leaves mid-stream does not stop the call: it completes, is billed once, and the retry gets it whole', async () => {
      const { key, id } = await suite.harness.key()
      upstream.script({ text: 'a b c d e f g h', chunkDelayMs: 40, usage: { prompt_tokens: 5, completion_tokens: 8 } })
      const body = { model: 'test/cheap', stream: true, stream_options: { include_usage: true }, messages: hi }
      const client = new AbortController()
      const response = await suite.harness.gateway.handle(
        new Request('http://localhost/v1/chat/completions', {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json', 'idempotency-key': 'leaver' },
          body: JSON.stringify(body),
          signal: client.signal,
        }),
      )
      const reader = response.body!.getReader()
      await reader.read()
      client.abort()
      await reader.cancel()
      await until(async () => (await chargesOf(suite.harness, id)) === 1)
      expect(upstream.received[0]!.aborted).toBe(false)
      const replay = await post('/v1/chat/completions', key, body, 'leaver')
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.headers.get('x-request-id')).toBe(response.headers.get('x-request-id'))
      const content = replay.text
        .split('\n\n')
        .filter((event) => event.startsWith('data: {'))
        .map((event) => JSON.parse(event.slice(6)).choices[0]?.delta?.content ?? '')
        .join('')
      expect(content).toBe('a b c d e f g h')
      expect(replay.text).toContain('"cost"')
      expect(upstream.received).toHaveLength(1)
      expect(await chargesOf(suite.harness, id)).toBe(1)
    })
  })
}

for (const kind of testDatabases) {
  describe(`idempotent retries across instances (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)
    const upstream = suite.upstream
    beforeEach(() => upstream.reset())
    const body = { model: 'test/cheap', messages: hi }
    const post = (gateway: TestGateway, key: string, idempotencyKey: string) =>
      gateway.call('POST', '/v1/chat/completions', { headers: { ...bearer(key), 'idempotency-key': idempotencyKey }, body })

    test('concurrent duplicates on two instances: one runs, the others are 409, one charge', async () => {
      const other = suite.instance()
      const { key, id } = await suite.harness.key()
      upstream.script({ text: 'Once for all.', delayMs: 300 })
      const replies = await Promise.all(Array.from({ length: 6 }, (_, index) => post(index % 2 === 0 ? suite.harness : other, key, 'together')))
      const statuses = replies.map((reply) => reply.status).sort()
      expect(statuses).toEqual([200, 409, 409, 409, 409, 409])
      const answered = replies.find((reply) => reply.status === 200)!
      // The other instance replays what the first ran.
      const replays = await Promise.all([post(suite.harness, key, 'together'), post(other, key, 'together')])
      for (const replay of replays) expectReplayOf(replay, answered)
      expect(upstream.received).toHaveLength(1)
      expect(await chargesOf(suite.harness, id)).toBe(1)
    })

    test("a crashed instance's claim is taken over once its lease lapsed and nothing can bill it; a billed one is 422", async () => {
      const { key, id } = await suite.harness.key()
      const identity = { scope: `key:${id}`, path: '/v1/chat/completions', key: 'orphan' }
      const fingerprint = await requestFingerprint(body, '')
      // An instance claimed the key and died before its call held anything.
      const dead = await suite.harness.services.idempotentCalls.claim(identity, fingerprint, 'req_dead')
      expect(dead.kind).toBe('run')
      expectError(await post(suite.harness, key, 'orphan'), 409, 'idempotency_key_in_use')
      const ttlMs = suite.harness.services.config.holdTtlMs
      const later = suite.instance({ now: () => Date.now() + ttlMs + 1_000 })
      upstream.script({ text: 'Taken over.' })
      const taken = await post(later, key, 'orphan')
      expect(taken.json.choices[0].message.content).toBe('Taken over.')
      expect(await chargesOf(suite.harness, id)).toBe(1)
      expectReplayOf(await post(suite.harness, key, 'orphan'), taken)

      // This one died after its call was charged: running it again would bill the key twice.
      const charged = await post(suite.harness, key, 'other-key')
      const billed = { ...identity, key: 'billed' }
      expect((await suite.harness.services.idempotentCalls.claim(billed, fingerprint, charged.headers.get('x-request-id')!)).kind).toBe('run')
      expectError(await post(later, key, 'billed'), 422, 'idempotency_key_reused')
      expectError(await post(suite.harness, key, 'billed'), 422, 'idempotency_key_reused')
      expect(await chargesOf(suite.harness, id)).toBe(2)
    })

    test('kept answers are swept 24 hours after their call: the key then runs again', async () => {
      const { key, id } = await suite.harness.key()
      upstream.script({ text: 'Day one.' }, { text: 'Day two.' })
      expect((await post(suite.harness, key, 'daily')).json.choices[0].message.content).toBe('Day one.')
      expect(await suite.harness.services.idempotentCalls.sweep()).toBe(0)
      const tomorrow = suite.instance({ now: () => Date.now() + 24 * 60 * 60 * 1000 + 60_000 })
      expect(await tomorrow.services.idempotentCalls.sweep()).toBeGreaterThanOrEqual(1)
      expect((await post(suite.harness, key, 'daily')).json.choices[0].message.content).toBe('Day two.')
      expect(await chargesOf(suite.harness, id)).toBe(2)
    })
  })
}
