import { beforeEach, describe, expect, test } from 'bun:test'
import { MetricRegistry } from '../../src/observability/metric-registry'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { type Exposition, parseExposition, sampleValue } from '../support/exposition'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

const METRICS_TOKEN = 'test-metrics-token-9876543210'
const hi = [{ role: 'user', content: 'Say hi.' }]
const CHAT = '/v1/chat/completions'

/**
 * Every figure is read as a difference between two scrapes: the registry counts the whole
 * process, and other suites in the same run may have served requests before this one.
 */
describe('GET /metrics after known traffic', () => {
  const suite = gatewaySuite(testDatabases[0]!, { secondUpstream: true, env: { TOLLGATE_METRICS_TOKEN: METRICS_TOKEN } })
  const a = suite.upstream
  const b = suite.secondUpstream
  /** Every key, key secret and account id this suite made: none may appear in a label. */
  const identities: string[] = []
  beforeEach(() => {
    a.reset()
    b.reset()
  })

  const scrape = async (token = METRICS_TOKEN): Promise<Exposition> => {
    const reply = await suite.harness.call('GET', '/metrics', { headers: bearer(token) })
    expect(reply.status).toBe(200)
    expect(reply.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    return parseExposition(reply.text)
  }
  const newKey = async (options: Record<string, unknown> = {}) => {
    const created = await suite.harness.key(options)
    identities.push(created.id, created.key, created.accountId)
    return created
  }
  const chat = (key: string, body: object) => suite.harness.call('POST', CHAT, { headers: bearer(key), body })
  /** The credits the ledger charged these keys for a model. */
  const ledgerCharged = async (keyIds: string[], model: string) => {
    let total = 0
    for (const keyId of keyIds) {
      const entries = (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as { kind: string; model: string; amount: number }[]
      for (const entry of entries) if (entry.kind === 'charge' && entry.model === model) total += entry.amount
    }
    return total
  }
  const delta = (before: Exposition, after: Exposition, name: string, labels: Record<string, string> = {}) =>
    sampleValue(after, name, labels) - sampleValue(before, name, labels)

  test('requests by route, model and status; tokens as the upstream reported them; credits as the ledger charged', async () => {
    const { key, id: keyId } = await newKey()
    const before = await scrape()

    a.script(
      { text: 'one', usage: { prompt_tokens: 120, completion_tokens: 30 } },
      { text: 'two', usage: { prompt_tokens: 80, completion_tokens: 20 } },
      { text: 'three words here', usage: { prompt_tokens: 50, completion_tokens: 3 } },
    )
    expect((await chat(key, { model: 'test/cheap', messages: hi })).status).toBe(200)
    expect((await chat(key, { model: 'test/cheap', messages: hi })).status).toBe(200)
    const streamed = await chat(key, { model: 'test/cheap', messages: hi, stream: true })
    expect(streamed.status).toBe(200)
    expect(streamed.text).toContain('[DONE]')
    // The alias is counted under the model that served it.
    a.script({ usage: { prompt_tokens: 10, completion_tokens: 5 } })
    expect((await chat(key, { model: 'tollgate/best', messages: hi })).status).toBe(200)
    // Refusals: a model nobody serves, no credential, a path no endpoint serves.
    expectError(await chat(key, { model: `test/unknown-${keyId}`, messages: hi }), 404, 'model_not_found')
    expectError(await suite.harness.call('POST', CHAT, { body: { model: 'test/cheap', messages: hi } }), 401, 'invalid_api_key')
    expect((await suite.harness.call('GET', `/v1/nothing-here/${keyId}`)).status).toBe(404)

    const after = await scrape()
    const requests = (model: string, status: number, route = CHAT) => delta(before, after, 'tollgate_requests_total', { route, model, status: String(status) })
    expect(requests('test/cheap', 200)).toBe(3)
    expect(requests('test/smart', 200)).toBe(1)
    expect(requests('tollgate/best', 200)).toBe(0)
    expect(requests('none', 404)).toBe(1)
    expect(requests('none', 401)).toBe(1)
    expect(requests('none', 404, 'unmatched')).toBe(1)

    const duration = (suffix: string, labels: Record<string, string> = {}) =>
      delta(before, after, `tollgate_request_duration_seconds${suffix}`, { route: CHAT, ...labels })
    expect(duration('_count')).toBe(6)
    expect(duration('_bucket', { le: '+Inf' })).toBe(6)
    expect(duration('_sum')).toBeGreaterThan(0)
    const buckets = after.samples.filter((sample) => sample.name === 'tollgate_request_duration_seconds_bucket' && sample.labels.route === CHAT)
    buckets.slice(1).forEach((bucket, index) => expect(bucket.value).toBeGreaterThanOrEqual(buckets[index]?.value ?? 0))

    const tokens = (model: string, kind: string) => delta(before, after, 'tollgate_tokens_total', { model, kind })
    expect(tokens('test/cheap', 'input')).toBe(120 + 80 + 50)
    expect(tokens('test/cheap', 'output')).toBe(30 + 20 + 3)
    expect(tokens('test/cheap', 'cache_read')).toBe(0)
    expect(tokens('test/smart', 'input')).toBe(10)
    expect(tokens('test/smart', 'output')).toBe(5)

    const charged = delta(before, after, 'tollgate_credits_charged_total', { model: 'test/cheap' })
    expect(charged).toBeGreaterThan(0)
    expect(charged).toBeCloseTo(await ledgerCharged([keyId], 'test/cheap'), 9)
    expect(delta(before, after, 'tollgate_credits_charged_total', { model: 'test/smart' })).toBeCloseTo(await ledgerCharged([keyId], 'test/smart'), 9)

    expect(delta(before, after, 'tollgate_upstream_attempts_total', { provider: 'a', outcome: 'ok' })).toBe(4)
    expect(delta(before, after, 'tollgate_upstream_ttfb_seconds_count', { provider: 'a' })).toBe(4)
    expect(delta(before, after, 'tollgate_billing_batch_size_count', { operation: 'hold' })).toBeGreaterThanOrEqual(1)
    expect(delta(before, after, 'tollgate_billing_batch_size_sum', { operation: 'hold' })).toBe(4)
    expect(delta(before, after, 'tollgate_billing_batch_size_sum', { operation: 'settle' })).toBe(4)
    expect(delta(before, after, 'tollgate_billing_batch_duration_seconds_count', { operation: 'settle' })).toBeGreaterThanOrEqual(1)
  })

  test('a failover counts one failed and one ok attempt, each with its time to first byte', async () => {
    const { key, id: keyId } = await newKey()
    const before = await scrape()
    a.script({ kind: 'error', status: 500 })
    b.script({ usage: { prompt_tokens: 40, completion_tokens: 8 } })
    expect((await chat(key, { model: 'test/smart', messages: hi })).status).toBe(200)
    expect(b.received).toHaveLength(1)

    const after = await scrape()
    const attempts = (provider: string, outcome: string) => delta(before, after, 'tollgate_upstream_attempts_total', { provider, outcome })
    expect(attempts('a', '5xx')).toBe(1)
    expect(attempts('a', 'ok')).toBe(0)
    expect(attempts('b', 'ok')).toBe(1)
    expect(delta(before, after, 'tollgate_upstream_ttfb_seconds_count', { provider: 'a' })).toBe(1)
    expect(delta(before, after, 'tollgate_upstream_ttfb_seconds_count', { provider: 'b' })).toBe(1)
    expect(delta(before, after, 'tollgate_requests_total', { route: CHAT, model: 'test/smart', status: '200' })).toBe(1)
    expect(delta(before, after, 'tollgate_tokens_total', { model: 'test/smart', kind: 'input' })).toBe(40)
    expect(delta(before, after, 'tollgate_credits_charged_total', { model: 'test/smart' })).toBeCloseTo(await ledgerCharged([keyId], 'test/smart'), 9)
  })

  test('an upstream that cannot be reached counts as unreachable', async () => {
    const { key } = await newKey()
    const before = await scrape()
    b.script({})
    expect((await chat(key, { model: 'test/fragile', messages: hi })).status).toBe(200)
    const after = await scrape()
    expect(delta(before, after, 'tollgate_upstream_attempts_total', { provider: 'dead', outcome: 'unreachable' })).toBe(1)
    // No headers came: no time to first byte.
    expect(delta(before, after, 'tollgate_upstream_ttfb_seconds_count', { provider: 'dead' })).toBe(0)
    expect(delta(before, after, 'tollgate_upstream_attempts_total', { provider: 'b', outcome: 'ok' })).toBe(1)
  })

  test('open streams and holds rise while a stream is held open and fall when its last byte is read', async () => {
    const { key } = await newKey()
    const before = await scrape()
    a.script({ text: 'a b c d e f g h', chunkDelayMs: 50, usage: { prompt_tokens: 5, completion_tokens: 8 } })
    const response = await suite.harness.gateway.handle(
      new Request(`http://localhost${CHAT}`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test/cheap', messages: hi, stream: true }),
      }),
    )
    expect(response.status).toBe(200)
    const during = await scrape()
    expect(delta(before, during, 'tollgate_streams_open')).toBe(1)
    expect(delta(before, during, 'tollgate_holds_open')).toBe(1)
    // Not counted yet: the request ends with its last byte.
    expect(delta(before, during, 'tollgate_requests_total', { route: CHAT, model: 'test/cheap', status: '200' })).toBe(0)

    expect(await response.text()).toContain('[DONE]')
    const after = await scrape()
    expect(delta(before, after, 'tollgate_streams_open')).toBe(0)
    expect(delta(before, after, 'tollgate_holds_open')).toBe(0)
    expect(delta(before, after, 'tollgate_requests_total', { route: CHAT, model: 'test/cheap', status: '200' })).toBe(1)
    expect(delta(before, after, 'tollgate_tokens_total', { model: 'test/cheap', kind: 'output' })).toBe(8)
  })

  test('a client that leaves a stream is counted as 499 and its stream closes', async () => {
    const { key } = await newKey()
    const before = await scrape()
    a.script({ text: 'a b c d e f g h i j k l', chunkDelayMs: 50 })
    const response = await suite.harness.gateway.handle(
      new Request(`http://localhost${CHAT}`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test/cheap', messages: hi, stream: true }),
      }),
    )
    const reader = response.body?.getReader()
    await reader?.read()
    await reader?.cancel()
    // The relay settles what was generated, then ends the record: wait for that, not for a time.
    let after = await scrape()
    for (let tries = 0; tries < 100 && delta(before, after, 'tollgate_requests_total', { route: CHAT, model: 'test/cheap', status: '499' }) === 0; tries++) {
      await Bun.sleep(20)
      after = await scrape()
    }
    expect(delta(before, after, 'tollgate_requests_total', { route: CHAT, model: 'test/cheap', status: '499' })).toBe(1)
    expect(delta(before, after, 'tollgate_streams_open')).toBe(0)
  })

  test('rate-limit refusals are counted by limit', async () => {
    const { key } = await newKey({ rpm: 1 })
    const before = await scrape()
    expect((await chat(key, { model: 'test/cheap', messages: hi })).status).toBe(200)
    expectError(await chat(key, { model: 'test/cheap', messages: hi }), 429, 'rate_limit_exceeded')
    const after = await scrape()
    expect(delta(before, after, 'tollgate_rate_limited_total', { limit: 'rpm' })).toBe(1)
    expect(delta(before, after, 'tollgate_requests_total', { route: CHAT, model: 'none', status: '429' })).toBe(1)
  })

  test('process memory and event-loop lag are reported', async () => {
    const exposition = await scrape()
    expect(sampleValue(exposition, 'process_resident_memory_bytes')).toBeGreaterThan(0)
    expect(sampleValue(exposition, 'tollgate_heap_used_bytes')).toBeGreaterThan(0)
    expect(exposition.types.get('tollgate_external_memory_bytes')).toBe('gauge')
    expect(exposition.types.get('tollgate_event_loop_lag_seconds')).toBe('gauge')
    expect(sampleValue(exposition, 'tollgate_event_loop_lag_seconds')).toBeGreaterThanOrEqual(0)
  })

  test('the metrics token and the admin token both read; anything else is 401', async () => {
    await scrape(METRICS_TOKEN)
    await scrape(ADMIN_TOKEN)
    expectError(await suite.harness.call('GET', '/metrics'), 401, 'invalid_api_key')
    expectError(await suite.harness.call('GET', '/metrics', { headers: bearer('wrong-token') }), 401, 'invalid_api_key')
    expectError(await suite.harness.call('GET', '/metrics', { headers: { authorization: METRICS_TOKEN } }), 401, 'invalid_api_key')
    const { key } = await newKey()
    expectError(await suite.harness.call('GET', '/metrics', { headers: bearer(key) }), 401, 'invalid_api_key')
  })

  test('no label carries an account, key or user id, a secret, or a raw path', async () => {
    const exposition = await scrape()
    const values = new Set(exposition.samples.flatMap((sample) => Object.values(sample.labels)))
    expect(identities.length).toBeGreaterThan(0)
    for (const identity of identities) {
      expect(values.has(identity)).toBe(false)
      for (const value of values) expect(value).not.toContain(identity)
    }
    for (const value of values) expect(value).not.toContain('nothing-here')
    const labelNames = new Set(exposition.samples.flatMap((sample) => Object.keys(sample.labels)))
    const allowed = new Set(['kind', 'le', 'limit', 'model', 'operation', 'outcome', 'provider', 'reason', 'route', 'status'])
    expect([...labelNames].filter((name) => !allowed.has(name))).toEqual([])
  })
})

describe('GET /metrics without its tokens', () => {
  const suite = gatewaySuite(testDatabases[0]!, { mockUpstream: false, gateway: false })

  test('404 when neither TOLLGATE_METRICS_TOKEN nor TOLLGATE_ADMIN_TOKEN is set', async () => {
    const harness = suite.instance({ env: { TOLLGATE_ADMIN_TOKEN: '' } })
    try {
      expectError(await harness.call('GET', '/metrics', { headers: bearer(ADMIN_TOKEN) }), 404, 'not_found')
      expectError(await harness.call('GET', '/metrics'), 404, 'not_found')
      expectError(await harness.call('POST', '/metrics'), 404, 'not_found')
    } finally {
      harness.services.close()
    }
  })

  test('with only the metrics token set, the admin token is no key to it', async () => {
    const harness = suite.instance({ env: { TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_METRICS_TOKEN: METRICS_TOKEN } })
    try {
      expect((await harness.call('GET', '/metrics', { headers: bearer(METRICS_TOKEN) })).status).toBe(200)
      expectError(await harness.call('GET', '/metrics', { headers: bearer(ADMIN_TOKEN) }), 401, 'invalid_api_key')
    } finally {
      harness.services.close()
    }
  })
})

test('label values and help text are escaped as the format asks, and parse back', () => {
  const registry = new MetricRegistry()
  const counter = registry.counter('example_total', 'Help with a \\ backslash\nand a line feed.', ['value'])
  const awkward = ['quote " inside', 'back\\slash', 'line\nfeed', '{brace}=,comma', '']
  awkward.forEach((value, index) => counter.inc({ value }, index + 1))
  const histogram = registry.histogram('example_seconds', 'A histogram.', [], [0.1, 1])
  for (const value of [0.05, 0.5, 5]) histogram.observe({}, value)
  const exposition = parseExposition(registry.render())
  awkward.forEach((value, index) => expect(sampleValue(exposition, 'example_total', { value })).toBe(index + 1))
  expect(exposition.help.get('example_total')).toBe('Help with a \\ backslash\nand a line feed.')
  expect(sampleValue(exposition, 'example_seconds_bucket', { le: '0.1' })).toBe(1)
  expect(sampleValue(exposition, 'example_seconds_bucket', { le: '1' })).toBe(2)
  expect(sampleValue(exposition, 'example_seconds_bucket', { le: '+Inf' })).toBe(3)
  expect(sampleValue(exposition, 'example_seconds_count')).toBe(3)
  expect(sampleValue(exposition, 'example_seconds_sum')).toBeCloseTo(5.55, 9)
})
