import { logEvent } from './log'

/** An attribute value in OTLP's JSON encoding (64-bit integers are strings there). */
export type OtlpValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean }

export interface OtlpAttribute {
  key: string
  value: OtlpValue
}

/** OTLP's span kinds. */
export const SpanKind = { internal: 1, server: 2, client: 3 } as const

/** One span in OTLP's JSON encoding: hex ids, times as decimal strings of nanoseconds. */
export interface OtlpSpan {
  traceId: string
  spanId: string
  /** Absent on a trace's root span. */
  parentSpanId?: string
  name: string
  kind: (typeof SpanKind)[keyof typeof SpanKind]
  startTimeUnixNano: string
  endTimeUnixNano: string
  attributes: OtlpAttribute[]
  /** Absent is "unset"; 2 is an error. */
  status?: { code: 2; message: string }
}

export interface OtlpExporterOptions {
  /** The collector's traces URL (`…/v1/traces`). */
  url: string
  headers: Record<string, string>
  /** Describes the process: `service.name` and the like. */
  resource: OtlpAttribute[]
  scope: { name: string; version: string }
  /** Spans waiting for export; a request that does not fit is dropped whole. */
  maxQueuedSpans?: number
  maxBatchSpans?: number
  /** How long spans wait for a batch to fill, and the shortest gap between two problem reports. */
  intervalMs?: number
  /** One export's bound: a collector that hangs costs a batch, never the gateway. */
  exportTimeoutMs?: number
}

/** Batches posted at once; more wait in the queue. */
const MAX_CONCURRENT_EXPORTS = 4

/**
 * Sends spans to an OpenTelemetry collector over OTLP/HTTP with the JSON encoding, in batches
 * (docs/operations.md#traces). Nothing here can slow or fail a request: spans are queued and
 * posted later; when the queue is full they are dropped and counted; a failed export is
 * dropped too (no retry). Problems are logged at most once per interval, with their counts.
 */
export class OtlpExporter {
  private readonly queue: OtlpSpan[] = []
  private readonly exports = new Set<Promise<void>>()
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly maxQueuedSpans: number
  private readonly maxBatchSpans: number
  private readonly intervalMs: number
  private readonly exportTimeoutMs: number
  /** Problems since the last report. */
  private droppedSpans = 0
  private failedExports = 0
  private lastFailure: string | undefined
  /** Spans dropped since the exporter started: the queue was full, an export failed, or a flush ran out of time. */
  droppedTotal = 0

  constructor(private readonly options: OtlpExporterOptions) {
    this.maxQueuedSpans = options.maxQueuedSpans ?? 8192
    this.maxBatchSpans = options.maxBatchSpans ?? 512
    this.intervalMs = options.intervalMs ?? 1000
    this.exportTimeoutMs = options.exportTimeoutMs ?? 10_000
  }

  /** Queues the spans of one request, all or none: half a tree is worth less than its absence. */
  enqueue(spans: OtlpSpan[]): void {
    if (this.queue.length + spans.length > this.maxQueuedSpans) {
      this.dropped(spans.length)
      return
    }
    this.queue.push(...spans)
    if (this.queue.length >= this.maxBatchSpans && this.exports.size < MAX_CONCURRENT_EXPORTS) this.sendBatches()
    else this.schedule()
  }

  /**
   * Exports everything queued and waits for exports under way, for at most `timeoutMs`; what
   * is still queued then is dropped and counted. For shutdown, after the last request ended.
   */
  async flush(timeoutMs = 5000): Promise<void> {
    this.cancelTimer()
    let timeUp = false
    let stop = () => {}
    const deadline = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timeUp = true
        resolve()
      }, timeoutMs)
      stop = () => {
        clearTimeout(timer)
        resolve()
      }
    })
    while (!timeUp && (this.queue.length > 0 || this.exports.size > 0)) {
      this.sendBatches()
      await Promise.race([deadline, ...this.exports])
    }
    stop()
    this.cancelTimer()
    if (this.queue.length > 0) this.dropped(this.queue.splice(0).length)
    this.report()
  }

  private schedule(): void {
    if (this.timer) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.report()
      this.sendBatches()
      if (this.queue.length > 0) this.schedule()
    }, this.intervalMs)
    // A quiet gateway with spans waiting must still be able to exit.
    this.timer.unref()
  }

  private cancelTimer(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  /** Starts exports for queued spans, a batch each, as far as the concurrency bound allows. */
  private sendBatches(): void {
    while (this.queue.length > 0 && this.exports.size < MAX_CONCURRENT_EXPORTS) this.send(this.queue.splice(0, this.maxBatchSpans))
  }

  private send(batch: OtlpSpan[]): void {
    const { url, headers, resource, scope } = this.options
    const body = JSON.stringify({ resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ scope, spans: batch }] }] })
    const exporting = fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(this.exportTimeoutMs),
    })
      .then(async (response) => {
        // The answer's body (a partial-success report) is not read, but the connection is freed.
        await response.body?.cancel().catch(() => undefined)
        if (!response.ok) this.failed(batch.length, `HTTP ${response.status}`)
      })
      .catch((error: unknown) => this.failed(batch.length, error instanceof Error ? `${error.name}: ${error.message}` : String(error)))
      .finally(() => {
        this.exports.delete(exporting)
        if (this.queue.length >= this.maxBatchSpans) this.sendBatches()
      })
    this.exports.add(exporting)
  }

  private dropped(spans: number): void {
    this.droppedSpans += spans
    this.droppedTotal += spans
    this.schedule()
  }

  private failed(spans: number, reason: string): void {
    this.failedExports += 1
    this.lastFailure = reason
    this.dropped(spans)
  }

  /** One line for everything that went wrong since the last one. */
  private report(): void {
    if (this.droppedSpans === 0 && this.failedExports === 0) return
    logEvent('warn', 'trace spans dropped', {
      dropped_spans: this.droppedSpans,
      failed_exports: this.failedExports,
      ...(this.lastFailure ? { error: this.lastFailure } : {}),
    })
    this.droppedSpans = 0
    this.failedExports = 0
    this.lastFailure = undefined
  }
}
