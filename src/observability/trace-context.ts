import { randomFillSync } from 'node:crypto'

/**
 * A request's place in a distributed trace (W3C Trace Context): the trace it belongs to, the
 * id of its own span, and the span it continues when the client sent a `traceparent`
 * (docs/operations.md#traces).
 */
export interface TraceContext {
  /** 32 lowercase hex digits. */
  traceId: string
  /** The request span's id: 16 lowercase hex digits. */
  spanId: string
  /** The client's span, when an incoming `traceparent` named one. */
  parentSpanId: string | undefined
  /**
   * Whether the request is recorded: the gateway's decision, never the caller's. A caller's
   * `traceparent` lends its trace id and parent span (continuity), but its sampled flag does not
   * keep a request out of the operator's traces (docs/operations.md#traces).
   */
  sampled: boolean
}

/** version-traceid-parentid-flags, lowercase hex; a later version may append fields after a dash. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE_ID = '0'.repeat(32)
const ZERO_SPAN_ID = '0'.repeat(16)

/**
 * The context of a new request span: it joins the trace of a well-formed incoming
 * `traceparent`, or starts a trace of its own when there is none or it is malformed (a bad
 * header is ignored, as the specification asks, never an error for the client). Every request
 * the gateway traces is recorded, whatever flags the caller sent.
 */
export function requestTraceContext(traceparent: string | null): TraceContext {
  const incoming = traceparent === null ? undefined : parseTraceparent(traceparent.trim())
  if (!incoming) return { traceId: randomHex(16), spanId: newSpanId(), parentSpanId: undefined, sampled: true }
  return { traceId: incoming.traceId, spanId: newSpanId(), parentSpanId: incoming.spanId, sampled: true }
}

/** The ids of a well-formed `traceparent`; its flags are read only for being hex, as sampling is not the caller's to decide. */
function parseTraceparent(header: string): { traceId: string; spanId: string } | undefined {
  const match = TRACEPARENT.exec(header)
  if (!match) return undefined
  const [, version, traceId, spanId, flags, rest] = match
  if (version === undefined || traceId === undefined || spanId === undefined || flags === undefined) return undefined
  // Version ff is forbidden; version 00 has exactly four fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined
  return { traceId, spanId }
}

/** The `traceparent` that names `spanId` (a span of this trace) as the parent of what the receiver does. */
export function traceparentOf(context: TraceContext, spanId: string): string {
  return `00-${context.traceId}-${spanId}-${context.sampled ? '01' : '00'}`
}

/** A random, non-zero span id. */
export function newSpanId(): string {
  return randomHex(8)
}

/** Random bytes drawn in blocks: a traced request takes several ids. */
const pool = Buffer.alloc(4096)
let offset = pool.length

function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const hex = pool.toString('hex', offset, offset + bytes)
  offset += bytes
  // All zeros is the specification's "invalid" id; a draw that hits it (2^-64) draws again.
  return /^0+$/.test(hex) ? randomHex(bytes) : hex
}
