import { beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { recordOf } from '../support/activity'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * Request activity (docs/operations.md#request-activity): every request to a billable or an
 * admin endpoint is recorded, however it ended, through the real app and its database, and read
 * back through the admin API. Records are written in batches: a test flushes the writer instead
 * of waiting for its interval.
 */
const hi = [{ role: 'user', content: 'Say hi.' }]
const LONG_TEXT = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ')

for (const kind of testDatabases) {
  describe(`request activity on ${kind.kind}`, () => {
    const suite = gatewaySuite(kind, { served: true, secondUpstream: true })
    let key: { id: string; key: string; accountId: string }

    beforeAll(async () => {
      key = await suite.harness.key()
    })
    beforeEach(() => {
      suite.upstream.reset()
      suite.secondUpstream.reset()
    })

    const post = (path: string, body: object, options: { credential?: string; signal?: AbortSignal; headers?: Record<string, string> } = {}) =>
      fetch(`${suite.origin}${path}`, {
        method: 'POST',
        headers: { ...bearer(options.credential ?? key.key), 'content-type': 'application/json', ...options.headers },
        body: JSON.stringify(body),
        signal: options.signal,
      })

    test('a billed stream: its tokens, its cost (the ledger charge), the attempt, the session, the ledger entries', async () => {
      suite.upstream.script({ text: 'Hi there.', usage: { prompt_tokens: 20, completion_tokens: 40 } })
      const response = await post('/v1/chat/completions', { model: 'test/cheap', messages: hi, stream: true }, { headers: { 'x-session-id': 'sess-42' } })
      expect(response.status).toBe(200)
      await response.text()
      const requestId = response.headers.get('x-request-id')
      const record = await recordOf(suite.harness, requestId)
      expect(record).toMatchObject({
        request_id: requestId,
        method: 'POST',
        route: '/v1/chat/completions',
        status: 200,
        error_code: null,
        account_id: key.accountId,
        key_id: key.id,
        user_sub: null,
        model_requested: 'test/cheap',
        model: 'test/cheap',
        attempts: [{ provider: 'a', status: 200 }],
        tokens: { input: 20, output: 40, cache_read: 0, cache_write: 0 },
        cost: (20 * 1 + 40 * 2) / 1e6,
        session_id: 'sess-42',
      })
      expect(record.duration_ms).toBeGreaterThanOrEqual(record.attempts[0].duration_ms)
      expect(Date.parse(record.created_at)).not.toBeNaN()
      expect(record.ledger.map((entry: any) => entry.kind)).toEqual(['hold', 'charge', 'release'])
      const charge = record.ledger.find((entry: any) => entry.kind === 'charge')
      expect(charge).toMatchObject({ request_id: requestId, amount: record.cost, key_id: key.id, session_id: 'sess-42' })
    })

    test('a refused 402 names its error code and its caller, and costs nothing', async () => {
      const poor = await suite.harness.key({ account_id: (await suite.harness.account(0)).id })
      const response = await post('/v1/chat/completions', { model: 'test/cheap', messages: hi }, { credential: poor.key })
      expect(response.status).toBe(402)
      const body = await response.json()
      const record = await recordOf(suite.harness, response.headers.get('x-request-id'))
      expect(record).toMatchObject({
        status: 402,
        error_code: body.error.code,
        key_id: poor.id,
        account_id: poor.accountId,
        model_requested: 'test/cheap',
        model: null,
        attempts: [],
        tokens: null,
        cost: 0,
        ledger: [],
      })
    })

    test('a 429 from the rate limit names the key it throttled', async () => {
      const limited = await suite.harness.key({ rpm: 1 })
      suite.upstream.script({ text: 'Hi.' })
      expect((await post('/v1/chat/completions', { model: 'test/cheap', messages: hi }, { credential: limited.key })).status).toBe(200)
      const response = await post('/v1/chat/completions', { model: 'test/cheap', messages: hi }, { credential: limited.key })
      expect(response.status).toBe(429)
      const record = await recordOf(suite.harness, response.headers.get('x-request-id'))
      expect(record).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded', key_id: limited.id, account_id: limited.accountId })
    })

    test('an unknown model is 404 with the model asked for and none that served', async () => {
      const response = await post('/v1/chat/completions', { model: 'no-such/model', messages: hi })
      expect(response.status).toBe(404)
      const record = await recordOf(suite.harness, response.headers.get('x-request-id'))
      expect(record).toMatchObject({ status: 404, error_code: 'model_not_found', model_requested: 'no-such/model', model: null, key_id: key.id })
    })

    test('an alias: the id asked for beside the model that served', async () => {
      suite.upstream.script({ text: 'Hi.', usage: { prompt_tokens: 3, completion_tokens: 2 } })
      const response = await post('/v1/chat/completions', { model: 'tollgate/best', messages: hi })
      expect(response.status).toBe(200)
      const record = await recordOf(suite.harness, response.headers.get('x-request-id'))
      expect(record).toMatchObject({ model_requested: 'tollgate/best', model: 'test/smart' })
    })

    test('an upstream failure on every route is a 5xx with each attempt and nothing billed', async () => {
      suite.upstream.script({ kind: 'error', status: 503, body: { error: { message: 'overloaded' } } })
      suite.secondUpstream.script({ kind: 'error', status: 500, body: { error: { message: 'broken' } } })
      const response = await post('/v1/chat/completions', { model: 'test/smart', messages: hi })
      expect(response.status).toBeGreaterThanOrEqual(500)
      const body = await response.json()
      const record = await recordOf(suite.harness, response.headers.get('x-request-id'))
      expect(record).toMatchObject({ status: response.status, error_code: body.error.code, model: null, model_requested: 'test/smart', cost: 0 })
      expect(record.attempts).toMatchObject([
        { provider: 'a', status: 503 },
        { provider: 'b', status: 500 },
      ])
      expect(record.ledger.map((entry: any) => entry.kind)).toEqual(['hold', 'release'])
    })

    test('a client that leaves mid-stream is 499 client_closed, with what it was charged', async () => {
      suite.upstream.script({ text: LONG_TEXT, chunkDelayMs: 50 })
      const controller = new AbortController()
      const response = await post('/v1/chat/completions', { model: 'test/cheap', messages: hi, stream: true }, { signal: controller.signal })
      const reader = response.body?.getReader()
      if (!reader) throw new Error('no body')
      let seen = ''
      while (!seen.includes('word3')) seen += new TextDecoder().decode((await reader.read()).value)
      controller.abort()
      const record = await recordOf(suite.harness, response.headers.get('x-request-id'))
      expect(record).toMatchObject({ status: 499, error_code: 'client_closed', model: 'test/cheap' })
      expect(record.cost).toBeGreaterThan(0)
      expect(record.cost).toBe(record.ledger.find((entry: any) => entry.kind === 'charge').amount)
    })

    test('admin calls are recorded, refused ones too; free endpoints and health checks are not', async () => {
      const created = await suite.harness.admin('POST', '/accounts', { name: 'recorded' })
      const refused = await suite.harness.call('GET', '/admin/v1/accounts', { headers: bearer('wrong-token') })
      expect(refused.status).toBe(401)
      const wallet = await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key.key) })
      const health = await suite.harness.call('GET', '/v1/healthz')
      expect(await recordOf(suite.harness, created.headers.get('x-request-id'))).toMatchObject({
        method: 'POST',
        route: '/admin/v1/accounts',
        status: 201,
        error_code: null,
        key_id: null,
        model: null,
      })
      expect(await recordOf(suite.harness, refused.headers.get('x-request-id'))).toMatchObject({ status: 401, error_code: 'invalid_api_key' })
      for (const reply of [wallet, health]) {
        expect((await suite.harness.admin('GET', `/requests/${reply.headers.get('x-request-id')}`)).status).toBe(404)
      }
    })
  })
}
