import { describe, expect, test } from 'bun:test'
import { CounterUnavailableError, RedisHitCounter } from '../../src/auth/rate-limit'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, type TestGateway, testConfig } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { mockCatalogEnv } from '../support/mock-catalog'
import { TcpProxy } from '../support/tcp-proxy'
import { MockUpstream } from '../upstream/mock-upstream'

describe('per-key limits and revocation across instances', () => {
  let clock = Date.UTC(2026, 10, 22, 12, 0, 0)
  const suite = gatewaySuite(testDatabases[testDatabases.length - 1]!, { mockUpstream: false, gateway: false, now: () => clock })
  const gateway = (env: Record<string, string> = {}) => suite.instance({ env })

  test('rpm: the request past the limit is 429 with Retry-After until the next minute', async () => {
    const harness = gateway()
    const { key } = await harness.key({ rpm: 2 })
    const models = () => harness.call('GET', '/v1/models', { headers: bearer(key) })
    expect((await models()).status).toBe(200)
    expect((await models()).status).toBe(200)
    clock += 15_000
    const limited = await models()
    expectError(limited, 429, 'rate_limit_exceeded')
    expect(limited.headers.get('retry-after')).toBe('45')
    const messages = await harness.call('POST', '/v1/messages', { headers: { 'x-api-key': key }, body: {} })
    expectError(messages, 429, 'rate_limit_exceeded', 'messages')
    clock += 45_000
    expect((await models()).status).toBe(200)
    // Keys without rpm are not limited.
    const { key: free } = await harness.key()
    for (let i = 0; i < 5; i++) expect((await harness.call('GET', '/v1/models', { headers: bearer(free) })).status).toBe(200)
  })

  test("tpm: once the minute's settled tokens reach the limit, requests wait for the next minute", async () => {
    const upstream = new MockUpstream().start().always({ usage: { prompt_tokens: 80, completion_tokens: 30 } })
    try {
      const harness = gateway(mockCatalogEnv(upstream.baseUrl, upstream.baseUrl))
      const { key } = await harness.key({ tpm: 100 })
      const chat = () =>
        harness.call('POST', '/v1/chat/completions', {
          headers: bearer(key),
          body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 },
        })
      expect((await chat()).status).toBe(200)
      const limited = await chat()
      expectError(limited, 429, 'rate_limit_exceeded')
      expect(limited.json.error.message).toContain('tokens per minute')
      expect(upstream.received).toHaveLength(1)
      clock += 60_000
      expect((await chat()).status).toBe(200)
    } finally {
      upstream.stop()
    }
  })

  test('rpm is shared by every instance through REDIS_URL', async () => {
    const env = { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }
    const [first, second] = [gateway(env), gateway(env)]
    const { key } = await first.key({ rpm: 3 })
    const statuses: number[] = []
    for (const harness of [first, second, first, second]) {
      statuses.push((await harness.call('GET', '/v1/models', { headers: bearer(key) })).status)
    }
    expect(statuses).toEqual([200, 200, 200, 429])
  })

  test('an unreachable Redis lets requests through rather than failing them', async () => {
    const harness = gateway({ REDIS_URL: 'redis://127.0.0.1:1' })
    const { key } = await harness.key({ rpm: 1 })
    for (let i = 0; i < 2; i++) expect((await harness.call('GET', '/v1/models', { headers: bearer(key) })).status).toBe(200)
  })

  test('an unreachable Redis costs no request a wait: the breaker skips it, and says so once', async () => {
    const warnings: string[] = []
    const original = console.error
    console.error = (...parts: unknown[]) => void warnings.push(parts.map(String).join(' '))
    try {
      // Nothing listens on port 9 of loopback.
      const harness = gateway({ REDIS_URL: 'redis://127.0.0.1:9' })
      const { key } = await harness.key({ rpm: 1, tpm: 10 })
      const startedAt = performance.now()
      for (let i = 0; i < 10; i++) expect((await harness.call('GET', '/v1/models', { headers: bearer(key) })).status).toBe(200)
      // Once a second each was the old cost; now only the first request waits, for half a second at most.
      expect(performance.now() - startedAt).toBeLessThan(4000)
    } finally {
      console.error = original
    }
    expect(warnings.filter((line) => line.includes('rate-limit counter unreachable'))).toHaveLength(1)
  })

  test('the breaker skips Redis for its window, then one request tries again; the limits apply once it answers', async () => {
    const redis = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
    const proxy = new TcpProxy(redis.hostname, Number(redis.port || 6379)).start()
    let now = 0
    const lines: { level: string; message: string }[] = []
    const counter = new RedisHitCounter(proxy.urlFor(redis.href), {
      now: () => now,
      breakerOpenMs: 5000,
      log: (level, message) => void lines.push({ level, message }),
    })
    const name = `tollgate:test:breaker:${crypto.randomUUID()}`
    try {
      expect(await counter.add(name, 1, 60_000)).toBe(1)
      proxy.cut()
      await expect(counter.add(name, 1, 60_000)).rejects.toBeInstanceOf(CounterUnavailableError)
      // Inside the window Redis is not asked: no request waits for it.
      now = 4000
      const startedAt = performance.now()
      for (let i = 0; i < 5; i++) await expect(counter.read(name)).rejects.toBeInstanceOf(CounterUnavailableError)
      expect(performance.now() - startedAt).toBeLessThan(200)
      proxy.restore()
      // Past the window a request tries again, until the client has reconnected; no new warning meanwhile.
      let total: number | undefined
      for (let attempt = 0; attempt < 40 && total === undefined; attempt++) {
        now += 5000
        total = await counter.add(name, 1, 60_000).catch(() => undefined)
        if (total === undefined) await Bun.sleep(250)
      }
      // The count sent while Redis was away may have landed late: at least the two that were answered.
      expect(total).toBeGreaterThanOrEqual(2)
      expect(lines).toEqual([
        { level: 'warn', message: 'rate-limit counter unreachable; requests pass unlimited until it answers again' },
        { level: 'info', message: 'rate-limit counter reachable again; limits apply' },
      ])
    } finally {
      counter.close()
      proxy.stop()
    }
  }, 30_000)

  test('free endpoints: every key has a default request limit there, counted apart from its own', async () => {
    expect(testConfig().freeLimits).toEqual({ rpm: 120, tpm: 10_000_000 })
    expect(testConfig({ TOLLGATE_FREE_RPM: '0', TOLLGATE_FREE_TPM: '0' }).freeLimits).toEqual({ rpm: null, tpm: null })
    clock = Math.ceil(clock / 60_000) * 60_000
    const harness = gateway(mockCatalogEnv('http://127.0.0.1:9/v1', 'http://127.0.0.1:9/v1'))
    const { key } = await harness.key()
    const count = (apiKey = key) =>
      harness.call('POST', '/v1/messages/count_tokens', {
        headers: { 'x-api-key': apiKey },
        body: { model: 'claude-test', messages: [{ role: 'user', content: 'hi' }] },
      })
    for (let i = 0; i < 60; i++) expect((await harness.call('GET', '/v1/wallet', { headers: bearer(key) })).status).toBe(200)
    for (let i = 0; i < 60; i++) expect((await count()).status).toBe(200)
    clock += 20_000
    const limited = await count()
    expectError(limited, 429, 'rate_limit_exceeded', 'messages')
    expect(limited.headers.get('retry-after')).toBe('40')
    expect(limited.json.error.message).toContain('120 requests per minute')
    expectError(await harness.call('GET', '/v1/pricing', { headers: bearer(key) }), 429, 'rate_limit_exceeded')
    // Billed and anonymous endpoints are not free ones; another key has its own count.
    expect((await harness.call('GET', '/v1/models', { headers: bearer(key) })).status).toBe(200)
    const { key: other } = await harness.key()
    expect((await count(other)).status).toBe(200)
    clock += 40_000
    expect((await count()).status).toBe(200)
  })

  test("count_tokens: once the minute's counted tokens reach the free tpm, 429 until the next minute", async () => {
    const harness = gateway({ ...mockCatalogEnv('http://127.0.0.1:9/v1', 'http://127.0.0.1:9/v1'), TOLLGATE_FREE_RPM: '1000', TOLLGATE_FREE_TPM: '5000' })
    const { key } = await harness.key()
    const count = (content: string) =>
      harness.call('POST', '/v1/messages/count_tokens', {
        headers: { 'x-api-key': key },
        body: { model: 'claude-test', messages: [{ role: 'user', content }] },
      })
    const first = await count('word '.repeat(6000))
    expect(first.json.input_tokens).toBeGreaterThan(5000)
    const limited = await count('hi')
    expectError(limited, 429, 'rate_limit_exceeded', 'messages')
    expect(limited.json.error.message).toContain('5000 tokens per minute')
    clock += 60_000
    expect((await count('hi')).status).toBe(200)
  })

  test('a revocation reaches the other instances within 5 seconds', async () => {
    const [revoker, other] = [gateway(), gateway()]
    const { id, key } = await revoker.key()
    const wallet = (harness: TestGateway) => harness.call('GET', '/v1/wallet', { headers: bearer(key) })
    expect((await wallet(other)).status).toBe(200)
    await revoker.admin('POST', `/keys/${id}/revoke`)
    expect((await wallet(revoker)).status).toBe(401)
    clock += 5000
    expectError(await wallet(other), 401, 'invalid_api_key')
  })

  test('an allotment given to a busy key on another instance is found in the background within 5 seconds, without a call waiting for it', async () => {
    const upstream = new MockUpstream().start()
    try {
      const env = mockCatalogEnv(upstream.baseUrl, upstream.baseUrl)
      const [admin, other] = [gateway(env), gateway(env)]
      const { id, key } = await admin.key()
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const call = () =>
        other.call('POST', '/v1/chat/completions', {
          headers: bearer(key),
          body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 },
        })
      const allotment = async () => (await admin.admin('GET', `/keys/${id}`)).json.allotment
      expect((await call()).status).toBe(200)
      expect((await admin.admin('POST', `/keys/${id}/allotment`, { amount: 1 })).status).toBe(200)
      // 3.5 s after the first look: still the account's wallet, and a look starts in the background.
      clock += 3500
      expect((await call()).status).toBe(200)
      expect((await allotment()).balance).toBe(1)
      // That look found the allotment: the next calls pay from it, well before the 5 s were up.
      for (let tries = 0; tries < 50 && (await allotment()).balance === 1; tries++) {
        await Bun.sleep(20)
        expect((await call()).status).toBe(200)
      }
      expect((await allotment()).balance).toBeLessThan(1)
    } finally {
      upstream.stop()
    }
  })

  test('a busy key is read again in the background before its cached row expires: its calls never wait, and a revocation still arrives within 5 seconds', async () => {
    const [revoker, other] = [gateway(), gateway()]
    const { id, key } = await revoker.key()
    const wallet = () => other.call('GET', '/v1/wallet', { headers: bearer(key) })
    expect((await wallet()).status).toBe(200)
    await revoker.admin('POST', `/keys/${id}/revoke`)
    // 3.5 s after the row was read: the call is answered from the cache and starts a new read.
    clock += 3500
    expect((await wallet()).status).toBe(200)
    // That read saw the revocation, well before the first row's 5 s were up.
    for (let tries = 0; tries < 50 && (await wallet()).status === 200; tries++) await Bun.sleep(20)
    expectError(await wallet(), 401, 'invalid_api_key')
  })
})
