import { afterAll, beforeAll, beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { loadConfig } from '../../src/config/config'
import { ConfigError } from '../../src/config/config-error'
import { OtlpExporter, type OtlpSpan, SpanKind } from '../../src/observability/otlp-exporter'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/** One POST the collector received. */
interface Export {
  path: string
  headers: Record<string, string>
  body: any
}

/** A local OTLP/HTTP receiver: records every export it is sent. */
class OtlpReceiver {
  readonly exports: Export[] = []
  private server: ReturnType<typeof Bun.serve> | undefined

  start(): this {
    this.server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (request) => {
        this.exports.push({ path: new URL(request.url).pathname, headers: Object.fromEntries(request.headers), body: await request.json() })
        return Response.json({})
      },
    })
    return this
  }

  get url(): string {
    if (!this.server) throw new Error('receiver not started')
    return `http://127.0.0.1:${this.server.port}`
  }

  stop(): void {
    this.server?.stop(true)
  }

  get spans(): any[] {
    return this.exports.flatMap((sent) => sent.body.resourceSpans.flatMap((resource: any) => resource.scopeSpans.flatMap((scope: any) => scope.spans)))
  }

  /** The spans of the trace whose request span carries this request id. */
  trace(requestId: string | null): { request: any; children: any[] } {
    const request = this.spans.find((span) => attributes(span)['tollgate.request_id'] === requestId)
    if (!request) throw new Error(`no request span for ${requestId}`)
    return { request, children: this.spans.filter((span) => span.parentSpanId === request.spanId) }
  }
}

/** A span's attributes as plain values (OTLP JSON carries 64-bit integers as strings). */
function attributes(span: any): Record<string, string | number | boolean> {
  const values: Record<string, string | number | boolean> = {}
  for (const { key, value } of span.attributes) {
    values[key] = 'intValue' in value ? Number(value.intValue) : (value.stringValue ?? value.doubleValue ?? value.boolValue)
  }
  return values
}

const hi = [{ role: 'user', content: 'Say hi, secretly.' }]
const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const INCOMING_SPAN = '00f067aa0ba902b7'

describe('traces over OTLP/HTTP', () => {
  const receiver = new OtlpReceiver()
  beforeAll(() => {
    receiver.start()
  })
  const suite = gatewaySuite(testDatabases[0]!, {
    env: () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`, OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=collector%20secret' }),
  })
  const upstream = suite.upstream
  afterAll(() => receiver.stop())
  beforeEach(() => {
    upstream.reset()
    receiver.exports.length = 0
  })

  const chat = (key: string, body: object, headers: Record<string, string> = {}) =>
    suite.harness.call('POST', '/v1/chat/completions', { headers: { ...bearer(key), ...headers }, body })

  test('a billed call with failover is one trace: the request, its authentication, hold, each attempt and settlement', async () => {
    const { key, id: keyId, accountId } = await suite.harness.key()
    upstream.script({ kind: 'error', status: 500 }, { text: 'Hi.', usage: { prompt_tokens: 1000, completion_tokens: 500 } })
    const reply = await chat(key, { model: 'test/smart', messages: hi })
    expect(reply.status).toBe(200)
    const requestId = reply.headers.get('x-request-id')
    await suite.harness.gateway.flushTraces()

    // Posted to the standard path, as JSON, with the configured collector header.
    expect(receiver.exports.length).toBeGreaterThan(0)
    for (const sent of receiver.exports) {
      expect(sent.path).toBe('/v1/traces')
      expect(sent.headers['content-type']).toBe('application/json')
      expect(sent.headers['x-collector-key']).toBe('collector secret')
      expect(sent.body.resourceSpans[0].resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'tollgate' } })
    }

    const { request, children } = receiver.trace(requestId)
    expect(request).toMatchObject({ name: 'POST /v1/chat/completions', kind: SpanKind.server })
    expect(request.parentSpanId).toBeUndefined()
    expect(request.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(request.spanId).toMatch(/^[0-9a-f]{16}$/)
    expect(request.status).toBeUndefined()
    const cost = (1000 * 3 + 500 * 15) / 1e6
    expect(attributes(request)).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'tollgate.request_id': requestId ?? '',
      'tollgate.outcome': 'ok',
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'test/smart',
      'gen_ai.response.model': 'test/smart',
      'gen_ai.provider.name': 'openai',
      'tollgate.provider': 'b',
      'gen_ai.usage.input_tokens': 1000,
      'gen_ai.usage.output_tokens': 500,
      'tollgate.cost': cost,
    })
    // The cost and tokens are the ones billed.
    expect(reply.json.usage.cost).toBe(cost)
    const ledger = (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as any[]
    const charge = ledger.find((entry) => entry.kind === 'charge')
    expect(charge).toMatchObject({ amount: cost, request_id: requestId })
    expect(charge.usage).toMatchObject({ input_tokens: 1000, output_tokens: 500 })

    // Children in the order the work happened, all of this trace and under the request span.
    const ordered = [...children].sort((left, right) => Number(BigInt(left.startTimeUnixNano) - BigInt(right.startTimeUnixNano)))
    expect(ordered.map((span) => span.name)).toEqual(['authenticate', 'hold', 'chat a', 'chat b', 'settle'])
    expect(new Set(receiver.spans.filter((span) => span.traceId === request.traceId).map((span) => span.spanId)).size).toBe(6)
    for (const span of children) {
      expect(span.traceId).toBe(request.traceId)
      expect(BigInt(span.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(request.startTimeUnixNano) - 1_000_000n)
      expect(BigInt(span.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(span.startTimeUnixNano))
    }
    const [failed, served] = ordered.filter((span) => span.kind === SpanKind.client)
    expect(attributes(failed)).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'tollgate.provider': 'a',
      'http.response.status_code': 500,
      'error.type': '500',
    })
    expect(failed.status).toMatchObject({ code: 2 })
    expect(attributes(served)).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'tollgate.provider': 'b',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
    })
    expect(served.status).toBeUndefined()

    // Each upstream request carried its own attempt span as the parent of whatever the provider traces.
    expect(upstream.received.map((received) => received.headers.traceparent)).toEqual([
      `00-${request.traceId}-${failed.spanId}-01`,
      `00-${request.traceId}-${served.spanId}-01`,
    ])

    // No account, key or caller, no credential and no body in anything exported.
    const exported = JSON.stringify(receiver.exports.map((sent) => sent.body))
    for (const secret of [keyId, accountId, key, 'sk-upstream', 'secretly']) expect(exported).not.toContain(secret)
  })

  test("an incoming traceparent: the request joins the caller's trace, a streamed answer is traced to its end", async () => {
    const { key } = await suite.harness.key()
    const reply = await chat(key, { model: 'test/cheap', messages: hi, stream: true }, { traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01` })
    expect(reply.status).toBe(200)
    expect(reply.text).toContain('[DONE]')
    await suite.harness.gateway.flushTraces()
    const { request, children } = receiver.trace(reply.headers.get('x-request-id'))
    expect(request.traceId).toBe(INCOMING_TRACE)
    expect(request.parentSpanId).toBe(INCOMING_SPAN)
    expect(attributes(request)['gen_ai.usage.output_tokens']).toBeGreaterThan(0)
    // The stream's settlement came after its last chunk: it is part of the tree.
    expect(children.map((span) => span.name).sort()).toEqual(['authenticate', 'chat a', 'hold', 'settle'])
    const attempt = children.find((span) => span.kind === SpanKind.client)
    expect(upstream.received[0]?.headers.traceparent).toBe(`00-${INCOMING_TRACE}-${attempt.spanId}-01`)
  })

  test('a malformed traceparent is ignored: the request is served and starts a trace of its own', async () => {
    const { key } = await suite.harness.key()
    const malformed = [
      'garbage',
      `00-${INCOMING_TRACE.toUpperCase()}-${INCOMING_SPAN}-01`,
      `00-${'0'.repeat(32)}-${INCOMING_SPAN}-01`,
      `00-${INCOMING_TRACE}-${'0'.repeat(16)}-01`,
      `ff-${INCOMING_TRACE}-${INCOMING_SPAN}-01`,
      `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01-extra`,
      `00-${INCOMING_TRACE.slice(1)}-${INCOMING_SPAN}-01`,
    ]
    const requestIds: (string | null)[] = []
    for (const traceparent of malformed) {
      const reply = await chat(key, { model: 'test/cheap', messages: hi }, { traceparent })
      expect(reply.status).toBe(200)
      requestIds.push(reply.headers.get('x-request-id'))
    }
    await suite.harness.gateway.flushTraces()
    const traceIds = requestIds.map((requestId) => {
      const { request } = receiver.trace(requestId)
      expect(request.parentSpanId).toBeUndefined()
      return request.traceId
    })
    expect(traceIds).not.toContain(INCOMING_TRACE)
    expect(new Set(traceIds).size).toBe(malformed.length)
  })

  test("a caller's unsampled flag keeps its trace id but not its request out of the operator's traces", async () => {
    const { key } = await suite.harness.key()
    const reply = await chat(key, { model: 'test/cheap', messages: hi }, { traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-00` })
    expect(reply.status).toBe(200)
    await suite.harness.gateway.flushTraces()
    // Sampling is the gateway's decision: the request is exported, in the caller's trace, under the caller's span.
    const { request, children } = receiver.trace(reply.headers.get('x-request-id'))
    expect(request.traceId).toBe(INCOMING_TRACE)
    expect(request.parentSpanId).toBe(INCOMING_SPAN)
    const attempt = children.find((span) => span.kind === SpanKind.client)
    expect(attempt?.traceId).toBe(INCOMING_TRACE)
    // The upstream is told the attempt is recorded.
    expect(upstream.received[0]?.headers.traceparent).toBe(`00-${INCOMING_TRACE}-${attempt?.spanId}-01`)
  })

  test('spans go out in a batch within the export interval, without a flush; probes are not traced', async () => {
    const { key } = await suite.harness.key()
    expect((await suite.harness.call('GET', '/v1/healthz')).status).toBe(200)
    const reply = await chat(key, { model: 'test/cheap', messages: hi })
    const deadline = Date.now() + 10_000
    const requestId = reply.headers.get('x-request-id')
    const exported = () =>
      receiver.spans.filter((span) => span.traceId === receiver.spans.find((root) => attributes(root)['tollgate.request_id'] === requestId)?.traceId)
    while (exported().length < 5 && Date.now() < deadline) await Bun.sleep(50)
    expect(receiver.trace(requestId).children).toHaveLength(4)
    expect(receiver.spans.filter((span) => span.name.includes('healthz'))).toEqual([])
  })

  test('a request refused at authentication is traced with its failed step and no GenAI usage', async () => {
    const reply = await chat('tollgate_sk_prod_not-a-real-key-000000000000', { model: 'test/cheap', messages: hi })
    expect(reply.status).toBe(401)
    await suite.harness.gateway.flushTraces()
    const { request, children } = receiver.trace(reply.headers.get('x-request-id'))
    expect(attributes(request)).toMatchObject({ 'http.response.status_code': 401, 'tollgate.outcome': 'refused' })
    expect(attributes(request)['gen_ai.usage.input_tokens']).toBeUndefined()
    expect(children.map((span) => span.name)).toEqual(['authenticate'])
  })
})

describe('without an OTLP endpoint', () => {
  const suite = gatewaySuite(testDatabases[0]!)
  const upstream = suite.upstream

  // No exporter exists to send anything: tracing is off when no endpoint is configured.
  test('nothing is traced and nothing is forwarded upstream, even for a caller that sent a traceparent', async () => {
    expect(suite.harness.services.config.traces).toBeUndefined()
    const { key } = await suite.harness.key()
    const reply = await suite.harness.call('POST', '/v1/chat/completions', {
      headers: { ...bearer(key), traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01` },
      body: { model: 'test/cheap', messages: hi },
    })
    expect(reply.status).toBe(200)
    await suite.harness.gateway.flushTraces()
    expect(upstream.received).toHaveLength(1)
    expect(upstream.received[0]?.headers.traceparent).toBeUndefined()
  })
})

describe('a collector that cannot be reached', () => {
  const suite = gatewaySuite(testDatabases[0]!, { env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces' } })

  test('costs the requests nothing: they are served, the spans dropped, the failure logged once per interval', async () => {
    const harness = suite.harness
    const lines: string[] = []
    const spy = spyOn(console, 'error').mockImplementation((line: unknown) => lines.push(String(line)))
    const started = performance.now()
    let elapsedMs = 0
    try {
      const { key } = await harness.key()
      for (let index = 0; index < 3; index++) {
        const reply = await harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/cheap', messages: hi } })
        expect(reply.status).toBe(200)
      }
      await harness.gateway.flushTraces()
      elapsedMs = performance.now() - started
    } finally {
      spy.mockRestore()
    }
    const reports = lines.map((line) => JSON.parse(line)).filter((event) => event.message === 'trace spans dropped')
    // Every export failed (one line per second at most, and one at the flush), and every span was counted.
    expect(reports.length).toBeGreaterThanOrEqual(1)
    expect(reports.length).toBeLessThanOrEqual(Math.floor(elapsedMs / 1000) + 1)
    for (const report of reports) expect(report).toMatchObject({ level: 'warn', error: expect.stringContaining('ECONNREFUSED') })
    expect(reports.reduce((total, report) => total + report.dropped_spans, 0)).toBeGreaterThanOrEqual(3 * 4)
  })
})

describe('the exporter queue', () => {
  test('is bounded: a request whose spans do not fit is dropped whole and counted', async () => {
    const receiver = new OtlpReceiver().start()
    const lines: string[] = []
    const spy = spyOn(console, 'error').mockImplementation((line: unknown) => lines.push(String(line)))
    const exporter = new OtlpExporter({
      url: `${receiver.url}/v1/traces`,
      headers: {},
      resource: [],
      scope: { name: 'test', version: '0' },
      maxQueuedSpans: 5,
      intervalMs: 60_000,
    })
    const span = (index: number): OtlpSpan => ({
      traceId: '1'.repeat(32),
      spanId: index.toString(16).padStart(16, '0'),
      name: `span ${index}`,
      kind: SpanKind.internal,
      startTimeUnixNano: '1',
      endTimeUnixNano: '2',
      attributes: [],
    })
    try {
      exporter.enqueue([span(1), span(2), span(3)])
      exporter.enqueue([span(4), span(5), span(6)])
      exporter.enqueue([span(7), span(8)])
      await exporter.flush()
    } finally {
      spy.mockRestore()
      receiver.stop()
    }
    expect(receiver.spans.map((sent) => sent.name)).toEqual(['span 1', 'span 2', 'span 3', 'span 7', 'span 8'])
    expect(exporter.droppedTotal).toBe(3)
    expect(lines.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ message: 'trace spans dropped', dropped_spans: 3, failed_exports: 0 })])
  })
})

describe('trace configuration', () => {
  test('the general endpoint gets /v1/traces; the traces endpoint is used as it is; the service name defaults to tollgate', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).traces).toEqual({
      url: 'http://collector:4318/v1/traces',
      headers: {},
      serviceName: 'tollgate',
    })
    const both = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp/spans',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-team = one',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=two',
      OTEL_SERVICE_NAME: 'gateway-eu',
    }).traces
    expect(both).toEqual({ url: 'https://traces.example/otlp/spans', headers: { authorization: 'Bearer abc', 'x-team': 'two' }, serviceName: 'gateway-eu' })
    expect(loadConfig({}).traces).toBeUndefined()
  })

  test('a malformed setting is refused at start, without quoting a header value', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(ConfigError)
    let message = ''
    try {
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'api-key-secret-value' })
    } catch (error) {
      message = error instanceof Error ? error.message : ''
    }
    expect(message).toContain('OTEL_EXPORTER_OTLP_HEADERS')
    expect(message).not.toContain('secret-value')
  })
})
