import type { requestActivity } from '../db/activity-schema'
import type { RequestRecord } from './request-record'

/** One request's activity record as it is inserted. */
export type ActivityRow = typeof requestActivity.$inferInsert

/**
 * The row of a finished request to `route` (its endpoint's path template). Only ids,
 * numbers and fixed words, as in the request log; the one text a client chose, the model it
 * named, was cut to printable ASCII where it was read (surfaces/endpoint.ts), so no row fails
 * its batch for text the database cannot store.
 */
export function activityRowOf(record: RequestRecord, route: string): ActivityRow {
  const usage = record.charge?.usage
  return {
    requestId: record.requestId,
    createdAt: new Date(record.startedAt),
    method: record.method,
    route,
    status: record.status ?? 0,
    errorCode: record.errorCode ?? null,
    accountId: record.party?.accountId ?? null,
    keyId: record.party?.keyId ?? null,
    userSub: record.party?.userSub ?? null,
    modelRequested: record.modelRequested ?? null,
    model: record.charge?.model ?? null,
    attempts: record.attempts.map((attempt) => ({
      provider: attempt.provider,
      ...(attempt.status !== undefined ? { status: attempt.status } : { reason: attempt.reason ?? 'unknown' }),
      duration_ms: hundredths(attempt.durationMs),
    })),
    tokens: usage ? { input: usage.inputTokens, output: usage.outputTokens, cache_read: usage.cacheReadTokens, cache_write: usage.cacheWriteTokens } : null,
    cost: record.charge?.costMicros ?? 0n,
    durationMs: hundredths(record.durationMs ?? 0),
    sessionId: record.sessionId,
  }
}

/** Hundredths of a millisecond, as the request log writes durations. */
function hundredths(milliseconds: number): number {
  return Math.round(milliseconds * 100) / 100
}
