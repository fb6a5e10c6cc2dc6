import { allInputTokens } from '../canonical/usage'
import { logEvent } from './log'
import { type OtlpAttribute, OtlpExporter, type OtlpSpan, SpanKind } from './otlp-exporter'
import type { RequestRecord } from './request-record'
import { newSpanId, requestTraceContext, type TraceContext } from './trace-context'

/** Where spans are exported (OTLP over HTTP), when an OTLP endpoint is set (docs/operations.md#traces). */
export interface TracesConfig {
  /** The full URL spans are posted to: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  url: string
  /** Sent with every export (a collector's API key): `OTEL_EXPORTER_OTLP_HEADERS`, overridden by `OTEL_EXPORTER_OTLP_TRACES_HEADERS`. */
  headers: Record<string, string>
  serviceName: string
}

/** What a span says of the provider behind an upstream attempt: its upstream API, and the host of its base URL. */
export interface TracedProvider {
  api: string
  baseUrl: string
}

/**
 * Traces, when an OTLP endpoint is configured (docs/operations.md#traces): each request's
 * record becomes a span tree once it ends (the request, its authentication, hold, upstream
 * attempts and settlement) with the GenAI semantic conventions' attributes and the cost, and
 * goes to the exporter's queue. Nothing is traced while the request runs but the ids: the
 * request's context, and each attempt's span id, which the upstream request carries.
 */
export class Tracing {
  constructor(
    private readonly exporter: OtlpExporter,
    /** The provider entry behind a provider name, read when a record ends (a reload may change it). */
    private readonly providerOf: (name: string) => TracedProvider | undefined,
  ) {}

  static fromConfig(config: TracesConfig | undefined, version: string, providerOf: (name: string) => TracedProvider | undefined): Tracing | undefined {
    if (!config) return undefined
    const exporter = new OtlpExporter({
      url: config.url,
      headers: config.headers,
      resource: [text('service.name', config.serviceName), text('service.version', version)],
      scope: { name: 'tollgate', version },
    })
    return new Tracing(exporter, providerOf)
  }

  /**
   * The trace context of a request: it joins the caller's trace when it sent a valid
   * `traceparent`. Health and readiness probes and metric scrapes are not traced: a load
   * balancer's probes would outnumber the traffic.
   */
  contextFor(headers: Headers, pathTemplate: string | undefined): TraceContext | undefined {
    if (pathTemplate !== undefined && UNTRACED.has(pathTemplate)) return undefined
    return requestTraceContext(headers.get('traceparent'))
  }

  /** The record's sink: its spans join the export queue. Never throws, as it runs on the request's path. */
  finished(record: RequestRecord): void {
    const trace = record.trace
    if (!trace?.sampled) return
    try {
      this.exporter.enqueue(this.spansOf(record, trace))
    } catch (error) {
      logEvent('error', 'could not build trace spans', { request_id: record.requestId, error: error instanceof Error ? error.message : String(error) })
    }
  }

  /** Exports the spans still queued, waiting at most `timeoutMs`: call it at shutdown, after the last request ended. */
  flush(timeoutMs?: number): Promise<void> {
    return this.exporter.flush(timeoutMs)
  }

  /** Spans dropped so far (queue full, export failed). */
  get droppedSpans(): number {
    return this.exporter.droppedTotal
  }

  private spansOf(record: RequestRecord, trace: TraceContext): OtlpSpan[] {
    const method = HTTP_METHODS.has(record.method) ? record.method : '_OTHER'
    const status = record.status ?? 0
    const operation = record.pathTemplate === undefined ? undefined : OPERATIONS[record.pathTemplate]
    const charge = record.charge
    const request: OtlpSpan = {
      traceId: trace.traceId,
      spanId: trace.spanId,
      ...(trace.parentSpanId ? { parentSpanId: trace.parentSpanId } : {}),
      name: record.pathTemplate ? `${method} ${record.pathTemplate}` : method,
      kind: SpanKind.server,
      startTimeUnixNano: unixNanos(record.startedAt),
      endTimeUnixNano: unixNanos(record.startedAt + (record.durationMs ?? 0)),
      attributes: [
        text('http.request.method', method),
        ...(record.pathTemplate ? [text('http.route', record.pathTemplate)] : []),
        integer('http.response.status_code', status),
        text('tollgate.request_id', record.requestId),
        ...(record.outcome ? [text('tollgate.outcome', record.outcome)] : []),
        ...(status >= 500 ? [text('error.type', String(status))] : []),
        ...(operation ? [text('gen_ai.operation.name', operation)] : []),
        ...(record.requestedModel ? [text('gen_ai.request.model', record.requestedModel)] : []),
        ...(charge
          ? [
              text('gen_ai.response.model', charge.model),
              ...this.providerAttributes(charge.provider),
              ...(charge.usage
                ? [
                    // The conventions count cached input among the input tokens, and name the cached part apart.
                    integer('gen_ai.usage.input_tokens', allInputTokens(charge.usage)),
                    integer('gen_ai.usage.output_tokens', charge.usage.outputTokens),
                    integer('gen_ai.usage.cache_read.input_tokens', charge.usage.cacheReadTokens),
                    integer('gen_ai.usage.cache_creation.input_tokens', charge.usage.cacheWriteTokens + charge.usage.cacheWrite1hTokens),
                  ]
                : []),
              decimal('tollgate.cost', charge.cost),
            ]
          : []),
      ],
      // Server spans mark 5xx only: a 4xx is the client's mistake, not the gateway's failure.
      ...(status >= 500 ? { status: { code: 2 as const, message: record.outcome ?? 'error' } } : {}),
    }
    const child = (name: string, kind: OtlpSpan['kind'], spanId: string, startedAt: number, durationMs: number) => ({
      traceId: trace.traceId,
      spanId,
      parentSpanId: trace.spanId,
      name,
      kind,
      startTimeUnixNano: unixNanos(startedAt),
      endTimeUnixNano: unixNanos(startedAt + durationMs),
    })
    const steps: OtlpSpan[] = record.steps.map((step) => ({
      ...child(step.name, SpanKind.internal, newSpanId(), step.startedAt, step.durationMs),
      attributes: [],
    }))
    const attempts: OtlpSpan[] = record.attempts.map((attempt) => {
      const failed = attempt.reason !== undefined || (attempt.status ?? 0) >= 400
      const failure = attempt.reason ?? String(attempt.status)
      return {
        ...child(`${operation ?? 'call'} ${attempt.provider}`, SpanKind.client, attempt.spanId ?? newSpanId(), attempt.startedAt, attempt.durationMs),
        attributes: [
          ...(operation ? [text('gen_ai.operation.name', operation)] : []),
          ...this.providerAttributes(attempt.provider),
          ...(record.requestedModel ? [text('gen_ai.request.model', record.requestedModel)] : []),
          ...(attempt.status !== undefined ? [integer('http.response.status_code', attempt.status)] : []),
          ...(failed ? [text('error.type', failure)] : []),
        ],
        ...(failed ? { status: { code: 2 as const, message: failure } } : {}),
      }
    })
    return [request, ...steps, ...attempts]
  }

  /** The provider as the conventions name its kind, the operator's name for it, and the host it was reached at. */
  private providerAttributes(name: string): OtlpAttribute[] {
    const provider = this.providerOf(name)
    const system = provider ? GEN_AI_PROVIDERS[provider.api] : undefined
    return [
      ...(system ? [text('gen_ai.provider.name', system), text('gen_ai.system', system)] : []),
      text('tollgate.provider', name),
      ...(provider ? [text('server.address', hostOf(provider.baseUrl))] : []),
    ]
  }
}

/** Probes and scrapes, not traffic. */
const UNTRACED = new Set(['/v1/healthz', '/v1/readyz', '/metrics'])

/** A client may send any token as its method; spans name only the ones HTTP defines (`_OTHER` otherwise, as the conventions say). */
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'])

/** The GenAI operation each billed endpoint performs. */
const OPERATIONS: Record<string, string> = {
  '/v1/chat/completions': 'chat',
  '/v1/messages': 'chat',
  '/v1/responses': 'chat',
  '/v1/embeddings': 'embeddings',
  '/v1/images/generations': 'generate_content',
  '/v1/audio/speech': 'generate_content',
  '/v1/audio/transcriptions': 'generate_content',
  '/v1/videos/generations': 'generate_content',
  // The Gemini API's model methods share one path (embedContent among them).
  '/v1beta/models/*': 'generate_content',
}

/** The conventions' `gen_ai.provider.name` for each upstream API (a provider entry's `api`). */
const GEN_AI_PROVIDERS: Record<string, string | undefined> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  vertex: 'gcp.vertex_ai',
}

function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).hostname
  } catch {
    return ''
  }
}

/** Epoch milliseconds (fractional) as OTLP's decimal nanoseconds, without the float rounding of multiplying first. */
function unixNanos(epochMs: number): string {
  const whole = Math.floor(epochMs)
  return (BigInt(whole) * 1_000_000n + BigInt(Math.round((epochMs - whole) * 1e6))).toString()
}

function text(key: string, value: string): OtlpAttribute {
  return { key, value: { stringValue: value } }
}

function integer(key: string, value: number): OtlpAttribute {
  return { key, value: { intValue: String(Number.isFinite(value) ? Math.trunc(value) : 0) } }
}

function decimal(key: string, value: number): OtlpAttribute {
  return { key, value: { doubleValue: value } }
}
