import { afterAll, beforeAll, beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { hashApiKey } from '../../src/auth/api-key-secret'
import { loadConfig } from '../../src/config/config'
import { ConfigError } from '../../src/config/config-error'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * The request log explains each request when it ends (docs/operations.md#logs): through the
 * real app over loopback HTTP, in front of mock upstreams, with real disconnects.
 */
const hi = [{ role: 'user', content: 'Say hi.' }]
const LONG_TEXT = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ')

describe('request log', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true, secondUpstream: true })
  let key: { id: string; key: string; accountId: string }
  const events: string[] = []
  let consoleSpy: ReturnType<typeof spyOn>

  beforeAll(async () => {
    key = await served.harness.key()
    consoleSpy = spyOn(console, 'error').mockImplementation((...parts: unknown[]) => events.push(parts.map(String).join(' ')))
  })
  afterAll(async () => {
    consoleSpy.mockRestore()
  })
  beforeEach(() => {
    served.upstream.reset()
    served.secondUpstream.reset()
  })

  const post = (path: string, body: object, signal?: AbortSignal) =>
    fetch(`${served.origin}${path}`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    })

  /** The request's line, once it is written (a stream's when its last byte went out or its client left). */
  async function lineOf(requestId: string | null): Promise<any> {
    for (let waited = 0; waited < 5000; waited += 10) {
      const line = served.harness.logs.map((text) => JSON.parse(text)).find((entry) => entry.request_id === requestId)
      if (line) return line
      await Bun.sleep(10)
    }
    throw new Error(`no log line for ${requestId}`)
  }

  async function chargeOf(requestId: string): Promise<any> {
    const entries = (await served.harness.admin('GET', `/ledger?request_id=${requestId}`)).json.data as any[]
    return entries.find((entry) => entry.kind === 'charge')
  }

  test('a failover past a refused provider key lists both attempts; tokens and cost are the ledger charge', async () => {
    served.upstream.script({
      kind: 'error',
      status: 401,
      body: { error: { message: 'Incorrect API key provided: sk-upstream-a.', type: 'invalid_request_error' } },
    })
    served.secondUpstream.script({ text: 'Hi there.', usage: { prompt_tokens: 1000, completion_tokens: 500, cached_tokens: 200 } })
    const response = await post('/v1/chat/completions', { model: 'test/smart', messages: hi })
    expect(response.status).toBe(200)
    await response.text()
    const requestId = response.headers.get('x-request-id')
    const line = await lineOf(requestId)
    expect(line).toMatchObject({
      level: 'info',
      method: 'POST',
      route: '/v1/chat/completions',
      status: 200,
      model: 'test/smart',
      outcome: 'ok',
      payer: key.id,
      key_id: key.id,
      tokens: { input: 800, output: 500, cache_read: 200, cache_write: 0 },
    })
    expect(line.attempts).toMatchObject([
      { provider: 'a', status: 401 },
      { provider: 'b', status: 200 },
    ])
    for (const attempt of line.attempts) expect(attempt.duration_ms).toBeNumber()
    expect(line.duration_ms).toBeGreaterThanOrEqual(line.attempts[0].duration_ms + line.attempts[1].duration_ms)
    expect(Date.parse(line.time)).not.toBeNaN()

    const charge = await chargeOf(line.request_id)
    expect(charge.amount).toBe((800 * 3 + 200 * 0.3 + 500 * 15) / 1e6)
    expect(line.cost).toBe(charge.amount)
    expect(line.tokens).toEqual({
      input: charge.usage.input_tokens,
      output: charge.usage.output_tokens,
      cache_read: charge.usage.cache_read_tokens,
      cache_write: charge.usage.cache_write_tokens,
      cache_write_1h: charge.usage.cache_write_1h_tokens,
    })
  })

  test('a stream is logged when its last byte goes out, with its whole duration and its charge', async () => {
    // About a second of stream: forty words, 25 ms apart.
    served.upstream.script({ text: LONG_TEXT, chunkDelayMs: 25, usage: { prompt_tokens: 20, completion_tokens: 40 } })
    const response = await post('/v1/chat/completions', { model: 'test/cheap', messages: hi, stream: true })
    expect(response.status).toBe(200)
    const requestId = response.headers.get('x-request-id')
    const headersAt = performance.now()
    // The headers are out; the request is not over.
    expect(served.harness.logs.some((text) => JSON.parse(text).request_id === requestId)).toBe(false)
    const body = await response.text()
    const streamedMs = performance.now() - headersAt
    expect(body).toContain('word39')
    expect(body).toContain('[DONE]')

    const line = await lineOf(requestId)
    expect(line).toMatchObject({ status: 200, outcome: 'ok', model: 'test/cheap', tokens: { input: 20, output: 40 } })
    expect(line.duration_ms).toBeGreaterThanOrEqual(streamedMs)
    const charge = await chargeOf(line.request_id)
    expect(line.cost).toBe(charge.amount)
    expect(line.cost).toBe((20 * 1 + 40 * 2) / 1e6)
  })

  test('a client that leaves mid-stream is 499 client_closed, charged for what was generated', async () => {
    served.upstream.script({ text: LONG_TEXT, chunkDelayMs: 50 })
    const controller = new AbortController()
    const response = await post('/v1/chat/completions', { model: 'test/cheap', messages: hi, stream: true }, controller.signal)
    expect(response.status).toBe(200)
    const requestId = response.headers.get('x-request-id')
    const reader = response.body?.getReader()
    if (!reader) throw new Error('no body')
    let seen = ''
    while (!seen.includes('word3')) seen += new TextDecoder().decode((await reader.read()).value)
    controller.abort()

    const line = await lineOf(requestId)
    expect(line).toMatchObject({ level: 'info', status: 499, outcome: 'client_closed', model: 'test/cheap', attempts: [{ provider: 'a', status: 200 }] })
    expect(line.tokens.output).toBeGreaterThan(0)
    expect(line.tokens.output).toBeLessThan(40)
    const charge = await chargeOf(line.request_id)
    expect(line.cost).toBeGreaterThan(0)
    expect(line.cost).toBe(charge.amount)
  })

  test('a client that leaves before a whole answer is ready is 499 client_closed, not billed', async () => {
    served.upstream.script({ kind: 'hang' })
    const controller = new AbortController()
    const answered = post('/v1/chat/completions', { model: 'test/cheap', messages: hi }, controller.signal).catch((error: unknown) => error)
    // The gateway has called the upstream: the client leaves while it waits.
    for (let waited = 0; served.upstream.received.length === 0 && waited < 5000; waited += 10) await Bun.sleep(10)
    expect(served.upstream.received).toHaveLength(1)
    const logged = served.harness.logs.length
    controller.abort()
    expect(await answered).toBeInstanceOf(Error)

    let line: any
    for (let waited = 0; !line && waited < 5000; waited += 10) {
      line = served.harness.logs
        .slice(logged)
        .map((text) => JSON.parse(text))
        .find((entry) => entry.route === '/v1/chat/completions')
      await Bun.sleep(10)
    }
    expect(line).toMatchObject({
      status: 499,
      outcome: 'client_closed',
      model: 'test/cheap',
      cost: 0,
      tokens: null,
      attempts: [{ provider: 'a', reason: 'client_closed' }],
    })
    expect(await chargeOf(line.request_id)).toBeUndefined()
  })

  test('an unexpected error is one error line with the request id; the client gets a bare 500', async () => {
    const second = await served.harness.key()
    events.length = 0
    await served.database.db.execute(sql.raw('alter table api_keys rename column hint to hint_renamed'))
    let response: Response
    try {
      response = await fetch(`${served.origin}/v1/wallet`, { headers: bearer(second.key) })
    } finally {
      await served.database.db.execute(sql.raw('alter table api_keys rename column hint_renamed to hint'))
    }
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(text).not.toContain('hint')
    const requestId = response.headers.get('x-request-id')
    const errors = events.map((event) => JSON.parse(event)).filter((event) => event.level === 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ request_id: requestId, message: 'unhandled error' })
    expect(Date.parse(errors[0].time)).not.toBeNaN()
    expect(errors[0].stack.length).toBeGreaterThan(0)
    expect(await lineOf(requestId)).toMatchObject({ level: 'error', status: 500, outcome: 'error' })
    for (const line of [...events, ...served.harness.logs]) {
      expect(line).not.toContain(second.key)
      expect(line).not.toContain(hashApiKey(second.key))
    }
  })

  test('no line carries the API key secret or its hash', async () => {
    await post('/v1/chat/completions', { model: 'test/cheap', messages: hi })
    await fetch(`${served.origin}/v1/wallet`, { headers: bearer(`${key.key}x`) })
    const secrets = [key.key, key.key.slice(-40), hashApiKey(key.key)]
    const lines = [...served.harness.logs, ...events]
    expect(served.harness.logs.length).toBeGreaterThan(5)
    for (const line of lines) for (const secret of secrets) expect(line).not.toContain(secret)
  })
})

describe('TOLLGATE_LOG_LEVEL', () => {
  const suite = gatewaySuite(testDatabases[0]!, { secondUpstream: true, gateway: false })

  test('request lines below the level are not written: info for served, warn for refused, error for failed', async () => {
    const quiet = suite.instance({ env: { TOLLGATE_LOG_LEVEL: 'warn' } })
    const { key } = await quiet.key()
    quiet.logs.length = 0
    expect((await quiet.call('GET', '/v1/wallet', { headers: bearer(key) })).status).toBe(200)
    expect((await quiet.call('GET', '/v1/wallet', { headers: bearer(`${key}x`) })).status).toBe(401)
    suite.upstream.script({ kind: 'error', status: 500 })
    suite.secondUpstream.script({ kind: 'error', status: 500 })
    const failed = await quiet.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/smart', messages: hi } })
    expect(failed.status).toBe(502)
    expect(quiet.logs.map((text) => JSON.parse(text))).toMatchObject([
      { level: 'warn', status: 401, outcome: 'refused' },
      {
        level: 'error',
        status: 502,
        outcome: 'upstream_error',
        attempts: [
          { provider: 'a', status: 500 },
          { provider: 'b', status: 500 },
        ],
      },
    ])
    quiet.services.close()
  })

  test('events below the level are not written', async () => {
    const script = "import { logEvent } from './src/observability/log'; logEvent('info', 'quiet'); logEvent('warn', 'heard'); logEvent('error', 'loud')"
    const run = async (level: string | undefined) => {
      const child = Bun.spawn(['bun', '-e', script], { env: { PATH: process.env.PATH ?? '', ...(level ? { TOLLGATE_LOG_LEVEL: level } : {}) }, stderr: 'pipe' })
      const text = await new Response(child.stderr).text()
      expect(await child.exited).toBe(0)
      return text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).message)
    }
    expect(await run(undefined)).toEqual(['quiet', 'heard', 'loud'])
    expect(await run('warn')).toEqual(['heard', 'loud'])
    expect(await run('error')).toEqual(['loud'])
  })

  test('a value that names no level is refused at start', () => {
    expect(() => loadConfig({ TOLLGATE_LOG_LEVEL: 'verbose' })).toThrow(ConfigError)
    expect(() => loadConfig({ TOLLGATE_LOG_LEVEL: 'verbose' })).toThrow(/TOLLGATE_LOG_LEVEL/)
    expect(loadConfig({ TOLLGATE_LOG_LEVEL: 'debug' }).logLevel).toBe('debug')
    expect(loadConfig({}).logLevel).toBe('info')
  })
})
