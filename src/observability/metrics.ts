import { MetricRegistry } from './metric-registry'
import type { RequestRecord, RequestRecordSink, UpstreamAttempt } from './request-record'

/**
 * The gateway's metrics (docs/operations.md#metrics), one registry per process: a Prometheus
 * scrape target is an instance, so every gauge and counter here counts this process.
 *
 * Labels carry only values from small, fixed sets: an endpoint's path template, a model id of
 * the catalogue, a provider name of the config, an HTTP status, a fixed word. Never an account,
 * key or user id, and never anything a client typed that the gateway did not recognise.
 */
export const registry = new MetricRegistry()

/** For whole requests: a health check takes milliseconds, a long stream minutes. */
const REQUEST_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
const TTFB_SECONDS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60]
const DATABASE_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
/** The batcher writes at most 500 items at once (billing/batcher.ts). */
const BATCH_SIZES = [1, 2, 5, 10, 25, 50, 100, 250, 500]

export const requestsTotal = registry.counter('tollgate_requests_total', 'Requests answered, by endpoint, model and status.', ['route', 'model', 'status'])
export const requestDuration = registry.histogram(
  'tollgate_request_duration_seconds',
  'From the request arriving to its answer ending (a stream: its last byte).',
  ['route'],
  REQUEST_SECONDS,
)
export const upstreamTtfb = registry.histogram(
  'tollgate_upstream_ttfb_seconds',
  'From sending an upstream request to its response headers, per upstream call that answered.',
  ['provider'],
  TTFB_SECONDS,
)
export const upstreamAttempts = registry.counter(
  'tollgate_upstream_attempts_total',
  'Upstream calls, by provider and outcome: ok, the status class of a failure (4xx, 5xx), or why none came (timeout, unreachable, client_closed, refused).',
  ['provider', 'outcome'],
)
export const tokensTotal = registry.counter(
  'tollgate_tokens_total',
  'Tokens billed, by model and kind (input, output, cache_read, cache_write, cache_write_1h).',
  ['model', 'kind'],
)
export const creditsCharged = registry.counter('tollgate_credits_charged_total', 'Credits taken from payers, by the model that served.', ['model'], 1_000_000)
export const holdsOpen = registry.gauge('tollgate_holds_open', 'Holds this process has taken whose call has not closed yet.')
export const holdClosingsPending = registry.gauge(
  'tollgate_hold_closings_pending',
  'Settlements and releases this process has not yet written to the database (retried while it is away).',
)
export const routesCoolingDown = registry.gauge(
  'tollgate_routes_cooling_down',
  'Routes (provider and upstream model) this process skips for now because they failed 3 times in a row.',
)
export const streamsOpen = registry.gauge('tollgate_streams_open', 'Streamed answers whose headers went out and whose last byte has not.')
export const billingBatchSize = registry.histogram(
  'tollgate_billing_batch_size',
  'Items written in one billing batch (operation: hold or settle; a settle batch carries releases too).',
  ['operation'],
  BATCH_SIZES,
)
export const billingBatchDuration = registry.histogram(
  'tollgate_billing_batch_duration_seconds',
  'Database time of one billing batch, failed ones included.',
  ['operation'],
  DATABASE_SECONDS,
)
export const usageAnomaliesTotal = registry.counter(
  'tollgate_usage_anomalies_total',
  'Upstream usage priced as reported but implausible, by provider and reason (output_over_limit, price_over_hold).',
  ['provider', 'reason'],
)
export const rateLimited = registry.counter('tollgate_rate_limited_total', 'Requests refused by a key rate limit (limit: rpm or tpm).', ['limit'])
export const residentMemory = registry.gauge('process_resident_memory_bytes', 'Resident set size of the process.')
// As the runtime reports them: Bun counts memory that heap objects own (buffers, the embedded
// database's WebAssembly memory) in the heap in use, so it can exceed the heap reserved.
export const heapUsed = registry.gauge('tollgate_heap_used_bytes', 'JavaScript heap in use, with the memory its objects own (process.memoryUsage().heapUsed).')
export const heapTotal = registry.gauge('tollgate_heap_total_bytes', 'JavaScript heap reserved (process.memoryUsage().heapTotal).')
export const externalMemory = registry.gauge(
  'tollgate_external_memory_bytes',
  'Memory held outside the JavaScript heap by its objects: buffers, WebAssembly memory (process.memoryUsage().external).',
)
export const eventLoopLag = registry.gauge('tollgate_event_loop_lag_seconds', 'How late the last event-loop probe ran (sampled every 500 ms).')

/** The label of a request no endpoint serves: a raw path would let any client add series. */
export const UNMATCHED_ROUTE = 'unmatched'
/** The model label of a request that named no model the gateway knows (or none at all). */
export const NO_MODEL = 'none'

const ATTEMPT_REASONS = new Set(['timeout', 'unreachable', 'client_closed', 'refused'])

/** Feeds the request metrics from each request's record; `knownModel` keeps labels to the catalogue's ids. */
export function metricsSink(knownModel: (id: string) => boolean): RequestRecordSink {
  return {
    streamOpened: () => streamsOpen.add({}, 1),
    finished: (record) => {
      if (record.isStreaming) streamsOpen.add({}, -1)
      recordFinished(record, knownModel)
    },
  }
}

function recordFinished(record: RequestRecord, knownModel: (id: string) => boolean): void {
  const route = record.pathTemplate ?? UNMATCHED_ROUTE
  // The charge names the catalogue model that served; before one, the id the surface resolved (an
  // alias, or a custom model's public name, which only the catalogue check keeps out).
  const requested = record.requestedModel
  const model = record.charge?.model ?? (requested !== undefined && knownModel(requested) ? requested : NO_MODEL)
  requestsTotal.inc({ route, model, status: String(record.status ?? 0) })
  requestDuration.observe({ route }, (record.durationMs ?? 0) / 1000)
  for (const attempt of record.attempts) {
    upstreamAttempts.inc({ provider: attempt.provider, outcome: attemptOutcome(attempt) })
    if (attempt.status !== undefined) upstreamTtfb.observe({ provider: attempt.provider }, (attempt.ttfbMs ?? attempt.durationMs) / 1000)
  }
  const charge = record.charge
  if (!charge) return
  creditsCharged.inc({ model: charge.model }, charge.cost)
  if (charge.usage) {
    tokensTotal.inc({ model: charge.model, kind: 'input' }, charge.usage.inputTokens)
    tokensTotal.inc({ model: charge.model, kind: 'output' }, charge.usage.outputTokens)
    tokensTotal.inc({ model: charge.model, kind: 'cache_read' }, charge.usage.cacheReadTokens)
    tokensTotal.inc({ model: charge.model, kind: 'cache_write' }, charge.usage.cacheWriteTokens)
    // Only models that price one-hour writes have them: no empty series for every other model.
    if (charge.usage.cacheWrite1hTokens > 0) tokensTotal.inc({ model: charge.model, kind: 'cache_write_1h' }, charge.usage.cacheWrite1hTokens)
  }
}

/** `ok` for a 2xx, the status class for any other answer, else the recorded reason (an unknown one is `error`). */
export function attemptOutcome(attempt: UpstreamAttempt): string {
  if (attempt.status !== undefined) return attempt.status >= 200 && attempt.status < 300 ? 'ok' : `${Math.floor(attempt.status / 100)}xx`
  return attempt.reason !== undefined && ATTEMPT_REASONS.has(attempt.reason) ? attempt.reason : 'error'
}

/** Times one billing batch write: its size and its database time, whether it succeeds or throws. */
export async function timedBatch<T>(operation: 'hold' | 'settle', size: number, write: () => Promise<T>): Promise<T> {
  billingBatchSize.observe({ operation }, size)
  const started = performance.now()
  try {
    return await write()
  } finally {
    billingBatchDuration.observe({ operation }, (performance.now() - started) / 1000)
  }
}

const LAG_PROBE_MS = 500
let lagProbe: ReturnType<typeof setInterval> | undefined

/**
 * Starts (once per process) the event-loop lag probe: a timer that notes how late it fires. A
 * loop busy with synchronous work fires it late by that long. Unref'd: it never keeps the
 * process alive.
 */
export function startEventLoopProbe(): void {
  if (lagProbe) return
  let expected = performance.now() + LAG_PROBE_MS
  lagProbe = setInterval(() => {
    const now = performance.now()
    eventLoopLag.set({}, Math.max(0, now - expected) / 1000)
    expected = now + LAG_PROBE_MS
  }, LAG_PROBE_MS)
  lagProbe.unref()
}

/** Reads the process's memory, which is sampled at scrape time, and writes every metric. */
export function renderMetrics(): string {
  const memory = process.memoryUsage()
  residentMemory.set({}, memory.rss)
  heapUsed.set({}, memory.heapUsed)
  heapTotal.set({}, memory.heapTotal)
  externalMemory.set({}, memory.external)
  return registry.render()
}

export const activityDropped = registry.counter(
  'tollgate_activity_dropped_total',
  'Request activity records dropped unwritten because the queue was full (the database away too long); the oldest go first.',
)
export const activityWriteFailures = registry.counter(
  'tollgate_activity_write_failures_total',
  'Batches of request activity records the database did not take (each is retried with backoff).',
)
