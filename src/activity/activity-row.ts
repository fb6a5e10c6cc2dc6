import type { ActivityAttempt, ActivityTokens } from '../db/activity-schema'
import { type RequestRecord, reportedMethod } from '../observability/request-record'

/**
 * One request's activity record as it is inserted: the table's columns as JSON values (a time
 * as ISO-8601 text, the cost in micro-credits as decimal text), so a whole batch is one JSON
 * parameter of one statement (activity-writer.ts).
 */
export interface ActivityRow {
  request_id: string
  created_at: string
  method: string
  route: string
  status: number
  error_code: string | null
  account_id: string | null
  key_id: string | null
  user_sub: string | null
  model_requested: string | null
  model: string | null
  attempts: ActivityAttempt[]
  tokens: ActivityTokens | null
  cost: string
  duration_ms: number
  session_id: string | null
}

/**
 * The row of a finished request to `route` (its endpoint's path template). Only ids,
 * numbers and fixed words, as in the request log; the one text a client chose, the model it
 * named, was cut to printable ASCII where it was read (surfaces/endpoint.ts), so no row fails
 * its batch for text the database cannot store.
 */
export function activityRowOf(record: RequestRecord, route: string): ActivityRow {
  const usage = record.charge?.usage
  return {
    request_id: record.requestId,
    created_at: new Date(record.startedAt).toISOString(),
    method: reportedMethod(record.method),
    route,
    status: record.status ?? 0,
    error_code: record.errorCode ?? null,
    account_id: record.party?.accountId ?? null,
    key_id: record.party?.keyId ?? null,
    user_sub: record.party?.userSub ?? null,
    model_requested: record.modelRequested ?? null,
    model: record.charge?.model ?? null,
    attempts: record.attempts.map((attempt) => ({
      provider: attempt.provider,
      ...(attempt.status !== undefined ? { status: attempt.status } : { reason: attempt.reason ?? 'unknown' }),
      duration_ms: hundredths(attempt.durationMs),
    })),
    tokens: usage ? { input: usage.inputTokens, output: usage.outputTokens, cache_read: usage.cacheReadTokens, cache_write: usage.cacheWriteTokens } : null,
    cost: (record.charge?.costMicros ?? 0n).toString(),
    duration_ms: hundredths(record.durationMs ?? 0),
    session_id: record.sessionId,
  }
}

/** Hundredths of a millisecond, as the request log writes durations. */
function hundredths(milliseconds: number): number {
  return Math.round(milliseconds * 100) / 100
}
