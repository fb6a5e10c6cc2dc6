import { and, desc, eq, gte, lt, or, type SQL, sql } from 'drizzle-orm'
import { requestActivity } from '../db/activity-schema'
import type { Database } from '../db/database'
import { createdAtText, olderThan, type TimeAndId } from '../db/keyset'
import { queryRows } from '../db/rows'

/**
 * Reads of the request activity (docs/operations.md#request-activity): lists newest first a page
 * at a time, one record by its request id, and the dashboard's counts and latencies by period.
 */

/** Calls to the billable API (every endpoint but the admin API's), or to the admin API. */
export type ActivityKind = 'api' | 'admin'

export interface ActivityFilter {
  kind?: ActivityKind
  accountId?: string
  keyId?: string
  userSub?: string
  /** The model that served, or the one the client asked for. */
  model?: string
  /** One status (`429`) or a class of them (`4`: every 4xx). */
  status?: { exact: number } | { class: number }
  errorCode?: string
  sessionId?: string
  /** ISO-8601 times Postgres reads to the microsecond: `since` inclusive, `until` exclusive. */
  since?: string
  until?: string
}

export type ActivityRecordRow = typeof requestActivity.$inferSelect

/** Newest first, `limit` records after `after` in (created_at, request_id) order, each with its position. */
export async function listActivity(db: Database, filter: ActivityFilter, page: { limit: number; after?: TimeAndId }) {
  const rows = await db
    .select({ record: requestActivity, createdAt: createdAtText(requestActivity.createdAt) })
    .from(requestActivity)
    .where(and(...conditionsOf(filter), olderThan(requestActivity.createdAt, requestActivity.requestId, page.after)))
    .orderBy(desc(requestActivity.createdAt), desc(requestActivity.requestId))
    .limit(page.limit)
  return rows.map(({ record, createdAt }) => ({ record, position: { createdAt, id: record.requestId } }))
}

export async function findActivity(db: Database, requestId: string): Promise<ActivityRecordRow | undefined> {
  const [row] = await db.select().from(requestActivity).where(eq(requestActivity.requestId, requestId))
  return row
}

function conditionsOf(filter: ActivityFilter): SQL[] {
  const conditions: SQL[] = []
  if (filter.kind !== undefined) {
    const admin = sql`coalesce(${requestActivity.route}, '') like '/admin/%'`
    conditions.push(filter.kind === 'admin' ? admin : sql`not (${admin})`)
  }
  if (filter.accountId !== undefined) conditions.push(eq(requestActivity.accountId, filter.accountId))
  if (filter.keyId !== undefined) conditions.push(eq(requestActivity.keyId, filter.keyId))
  if (filter.userSub !== undefined) conditions.push(eq(requestActivity.userSub, filter.userSub))
  if (filter.model !== undefined) {
    const either = or(eq(requestActivity.model, filter.model), eq(requestActivity.modelRequested, filter.model))
    if (either) conditions.push(either)
  }
  if (filter.status !== undefined) {
    if ('exact' in filter.status) conditions.push(eq(requestActivity.status, filter.status.exact))
    else {
      const from = filter.status.class * 100
      const range = and(gte(requestActivity.status, from), lt(requestActivity.status, from + 100))
      if (range) conditions.push(range)
    }
  }
  if (filter.errorCode !== undefined) conditions.push(eq(requestActivity.errorCode, filter.errorCode))
  if (filter.sessionId !== undefined) conditions.push(eq(requestActivity.sessionId, filter.sessionId))
  // The text itself, not a Date: Postgres keeps the microseconds a Date would drop.
  if (filter.since !== undefined) conditions.push(sql`${requestActivity.createdAt} >= ${filter.since}::timestamptz`)
  if (filter.until !== undefined) conditions.push(sql`${requestActivity.createdAt} < ${filter.until}::timestamptz`)
  return conditions
}

export type StatsUnit = 'hour' | 'day'

/** The period as /admin/v1/usage writes it (UTC): `YYYY-MM-DDTHH:00:00Z` or `YYYY-MM-DD`; these sort as their times do. */
const PERIOD_TEXT: Record<StatsUnit, string> = {
  hour: `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:00:00"Z"')`,
  day: `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`,
}

export interface ActivityStatsRow {
  period: string
  requests: number
  refused: number
  failed: number
  p50_ms: number | null
  p95_ms: number | null
}

/**
 * Requests per period, oldest first, with how many were refused (a 4xx, not a client that left)
 * and failed (a 5xx), and the median and 95th percentile of their durations. Only periods with
 * requests appear: the reader fills the others with zeros.
 */
export async function activityStats(
  db: Database,
  unit: StatsUnit,
  filter: Pick<ActivityFilter, 'kind' | 'accountId' | 'keyId' | 'model' | 'since' | 'until'>,
): Promise<ActivityStatsRow[]> {
  const where = and(...conditionsOf(filter))
  const period = sql.raw(PERIOD_TEXT[unit])
  const rows = await queryRows<{ period: string; requests: number | string; refused: number | string; failed: number | string; p50: unknown; p95: unknown }>(
    db,
    sql`select ${period} as period,
        count(*) as requests,
        count(*) filter (where status >= 400 and status < 500 and status <> 499) as refused,
        count(*) filter (where status >= 500) as failed,
        percentile_cont(0.5) within group (order by duration_ms) as p50,
        percentile_cont(0.95) within group (order by duration_ms) as p95
      from ${requestActivity}
      ${where ? sql`where ${where}` : sql``}
      group by 1
      order by 1`,
  )
  return rows.map((row) => ({
    period: row.period,
    requests: Number(row.requests),
    refused: Number(row.refused),
    failed: Number(row.failed),
    p50_ms: milliseconds(row.p50),
    p95_ms: milliseconds(row.p95),
  }))
}

/** A percentile as a number of milliseconds to the hundredth; null where there was none. */
function milliseconds(value: unknown): number | null {
  if (value === null || value === undefined) return null
  const number = Number(value)
  return Number.isFinite(number) ? Math.round(number * 100) / 100 : null
}
