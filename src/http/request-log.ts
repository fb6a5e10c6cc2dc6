import { type LogLevel, meetsLevel } from '../observability/log'
import { type RequestOutcome, type RequestRecord, reportedMethod, type UpstreamAttempt } from '../observability/request-record'

export type LogSink = (line: string) => void

/**
 * One JSON line per request, written when it ends: a stream when its last byte goes out or its
 * client leaves. It explains the request: which model served it, every upstream attempt with its
 * status or failure reason (a failover past a refused provider key shows here, not only in the
 * ledger), the tokens and credits charged, who paid, and how it ended (docs/operations.md#logs).
 *
 * Never headers, bodies or the raw path: they carry credentials and whatever a client chose to
 * send (an id with a NUL in it, a pasted key, kilobytes of path). `route` is the endpoint's path
 * template, null for a path no endpoint serves, and `model` a gateway id the request resolved,
 * so every field is an id, a number or a fixed word and the line stays short. The one text a
 * client chose, `model_requested`, is printable ASCII of 200 characters at most with anything
 * shaped like a credential redacted (surfaces/endpoint.ts).
 */
export function logRequest(sink: LogSink | undefined, record: RequestRecord, threshold: LogLevel = 'info'): void {
  if (!sink) return
  const outcome = record.outcome ?? 'error'
  const level = LEVEL_OF_OUTCOME[outcome]
  if (!meetsLevel(level, threshold)) return
  const durationMs = milliseconds(record.durationMs ?? 0)
  const usage = record.charge?.usage
  // Known from authentication on: a refusal after it (a rate limit, a scope, a model) names who was refused.
  const keyId = record.party?.keyId ?? null
  const userId = record.party?.userId ?? null
  sink(
    JSON.stringify({
      time: new Date().toISOString(),
      level,
      request_id: record.requestId,
      method: reportedMethod(record.method),
      route: record.pathTemplate ?? null,
      transport: record.transport,
      status: record.status,
      duration_ms: durationMs,
      // The field's name before `duration_ms`, kept for the readers that know it.
      latency_ms: durationMs,
      model: record.model ?? null,
      model_requested: record.modelRequested ?? null,
      attempts: record.attempts.map(attemptFields),
      tokens: usage
        ? {
            input: usage.inputTokens,
            output: usage.outputTokens,
            cache_read: usage.cacheReadTokens,
            cache_write: usage.cacheWriteTokens,
            cache_write_1h: usage.cacheWrite1hTokens,
          }
        : null,
      cost: record.charge?.cost ?? 0,
      payer: keyId ?? userId,
      outcome,
      error_code: record.errorCode ?? null,
      key_id: keyId,
      user_id: userId,
    }),
  )
}

/**
 * A request that went as planned, or that its client left, is `info`; one the gateway refused
 * (a 4xx of its own: a bad key, an empty wallet, a rate limit) is `warn`; one an upstream or
 * the gateway failed is `error`, so `TOLLGATE_LOG_LEVEL=warn` keeps only what went wrong.
 */
const LEVEL_OF_OUTCOME: Record<RequestOutcome, LogLevel> = {
  ok: 'info',
  client_closed: 'info',
  refused: 'warn',
  upstream_error: 'error',
  error: 'error',
}

function attemptFields(attempt: UpstreamAttempt): object {
  const result = attempt.status !== undefined ? { status: attempt.status } : { reason: attempt.reason ?? 'unknown' }
  return { provider: attempt.provider, ...result, duration_ms: milliseconds(attempt.durationMs) }
}

/** Hundredths of a millisecond: finer is noise, and the line stays short. */
function milliseconds(value: number): number {
  return Math.round(value * 100) / 100
}
