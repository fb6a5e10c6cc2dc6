import { type SQL, sql } from 'drizzle-orm'
import type { Queryable } from '../db/database'
import { queryRows } from '../db/rows'
import { creditsJson } from './money'
import { tokenCount } from './usage-rollup'

/**
 * Usage summaries read from the per-hour rollup (docs/billing.md#usage-rollups): every sum a
 * summary shows was written by the statement that wrote its charges, so it equals the ledger's.
 */

export type PeriodUnit = 'hour' | 'day' | 'month'
export type UsageDimension = 'account' | 'key' | 'user' | 'model' | 'session'
export const USAGE_DIMENSIONS: readonly UsageDimension[] = ['account', 'key', 'user', 'model', 'session']

/** The rollup column and the answer's field of each dimension. */
const DIMENSION_COLUMN: Record<UsageDimension, 'account_id' | 'key_id' | 'user_sub' | 'model' | 'session_id'> = {
  account: 'account_id',
  key: 'key_id',
  user: 'user_sub',
  model: 'model',
  session: 'session_id',
}

/** The period as the answer writes it (UTC): `YYYY-MM-DDTHH:00:00Z`, `YYYY-MM-DD` or `YYYY-MM`; these sort as their times do. */
const PERIOD_TEXT: Record<PeriodUnit, string> = {
  hour: `to_char(hour at time zone 'UTC', 'YYYY-MM-DD"T"HH24:00:00"Z"')`,
  day: `to_char(hour at time zone 'UTC', 'YYYY-MM-DD')`,
  month: `to_char(hour at time zone 'UTC', 'YYYY-MM')`,
}

export interface UsageQuery {
  unit: PeriodUnit
  /** Dimensions to group by besides the period, in any order (answers follow USAGE_DIMENSIONS). */
  dimensions: readonly UsageDimension[]
  accountId?: string
  keyId?: string
  model?: string
  /** The client's session (docs/billing.md#attribution). */
  sessionId?: string
  /** Inclusive; on a whole hour. */
  since?: Date
  /** Exclusive; on a whole hour. */
  until?: Date
}

/** One summary row as read: sums as decimal text (micro-credits for the amounts), '' for a party a charge did not have. */
export interface UsageRow {
  period: string
  account_id?: string
  key_id?: string
  user_sub?: string
  model?: string
  session_id?: string
  requests: string
  input_tokens: string
  output_tokens: string
  cache_read_tokens: string
  cache_write_tokens: string
  cache_write_1h_tokens: string
  cost: string
  uncollected: string
}

/** Where a page ends: the last row's period and dimension values, in USAGE_DIMENSIONS order. */
export type UsagePosition = string[]

/**
 * One page of summary rows, newest period first (then by the grouped parties, descending, so
 * that one row comparison continues a page after `after`).
 */
export async function summarizeUsage(db: Queryable, query: UsageQuery, page: { limit: number; after?: UsagePosition }): Promise<UsageRow[]> {
  const columns = USAGE_DIMENSIONS.filter((dimension) => query.dimensions.includes(dimension)).map((dimension) => DIMENSION_COLUMN[dimension])
  const keyColumns = ['period', ...columns]
  const conditions: SQL[] = []
  if (query.accountId !== undefined) conditions.push(sql`account_id = ${query.accountId}`)
  if (query.keyId !== undefined) conditions.push(sql`key_id = ${query.keyId}`)
  if (query.model !== undefined) conditions.push(sql`model = ${query.model}`)
  if (query.sessionId !== undefined) conditions.push(sql`session_id = ${query.sessionId}`)
  if (query.since) conditions.push(sql`hour >= ${query.since.toISOString()}::timestamptz`)
  if (query.until) conditions.push(sql`hour < ${query.until.toISOString()}::timestamptz`)
  const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``
  const after =
    page.after && page.after.length === keyColumns.length
      ? sql`where (${sql.raw(keyColumns.join(', '))}) < (${sql.join(
          page.after.map((value) => sql`${value}::text collate "C"`),
          sql`, `,
        )})`
      : sql``
  const groupColumns = sql.raw(keyColumns.map((_, index) => String(index + 1)).join(', '))
  // Byte order ("C"), whatever the database's default collation: pages and clients sort alike.
  const selected = sql.raw([`${PERIOD_TEXT[query.unit]} as period`, ...columns.map((column) => `${column} collate "C" as ${column}`)].join(', '))
  return queryRows<UsageRow>(
    db,
    sql`
    select * from (
      select ${selected}, sum(requests)::text as requests, sum(input_tokens)::text as input_tokens, sum(output_tokens)::text as output_tokens,
        sum(cache_read_tokens)::text as cache_read_tokens, sum(cache_write_tokens)::text as cache_write_tokens,
        sum(cache_write_1h_tokens)::text as cache_write_1h_tokens,
        sum(cost)::text as cost, sum(uncollected)::text as uncollected
      from usage_rollups ${where}
      group by ${groupColumns}
    ) summary
    ${after}
    order by ${sql.raw(keyColumns.map((column) => `${column} desc`).join(', '))}
    limit ${page.limit}::int`,
  )
}

/** The position after `row` in a summary of `query`. */
export function positionOf(query: UsageQuery, row: UsageRow): UsagePosition {
  return [
    row.period,
    ...USAGE_DIMENSIONS.filter((dimension) => query.dimensions.includes(dimension)).map((dimension) => row[DIMENSION_COLUMN[dimension]] ?? ''),
  ]
}

export interface RecentCharge {
  request_id: string | null
  created_at: Date
  model: string | null
  /** Whole counts as decimal text, counted as the rollup counts them. */
  input_tokens: string
  output_tokens: string
  /** Micro-credits charged. */
  amount: bigint
}

/** A key's most recent charge entries, newest first (the ledger's key index, read backwards). */
export async function recentCharges(db: Queryable, keyId: string, limit: number): Promise<RecentCharge[]> {
  const rows = await queryRows<{
    request_id: string | null
    created_at: string | Date
    model: string | null
    input_tokens: string
    output_tokens: string
    amount: string
  }>(
    db,
    sql`select request_id, created_at, model, (${tokenCount('usage', 'input_tokens')})::text as input_tokens,
        (${tokenCount('usage', 'output_tokens')})::text as output_tokens, amount::text as amount
      from ledger_entries where key_id = ${keyId} and kind = 'charge' order by id desc limit ${limit}::int`,
  )
  return rows.map((row) => ({ ...row, created_at: new Date(row.created_at), amount: BigInt(row.amount) }))
}

/** JSON text written as it is (see creditsJson): a whole count past 2^53 keeps its digits. */
const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON

/** A sum of whole counts as a JSON number, every digit kept. */
export function countJson(text: string): unknown {
  return /^\d+$/.test(text) ? rawJson(text) : 0
}

/**
 * A summary row as the API answers it: the period, the parties grouped by (null for a charge
 * without that party, such as the user of a key's call), the counts, and the amounts in credits.
 */
export function summaryView(row: UsageRow, query: UsageQuery) {
  const view: { period: string } & Partial<Record<(typeof DIMENSION_COLUMN)[UsageDimension], string | null>> = { period: row.period }
  for (const dimension of USAGE_DIMENSIONS) {
    if (!query.dimensions.includes(dimension)) continue
    const field = DIMENSION_COLUMN[dimension]
    view[field] = row[field] ? row[field] : null
  }
  return {
    ...view,
    requests: countJson(row.requests),
    input_tokens: countJson(row.input_tokens),
    output_tokens: countJson(row.output_tokens),
    cache_read_tokens: countJson(row.cache_read_tokens),
    cache_write_tokens: countJson(row.cache_write_tokens),
    cache_write_1h_tokens: countJson(row.cache_write_1h_tokens),
    cost: creditsJson(BigInt(row.cost)),
    uncollected: creditsJson(BigInt(row.uncollected)),
  }
}
