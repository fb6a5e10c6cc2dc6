import { type SQL, sql } from 'drizzle-orm'
import type { PgColumn } from 'drizzle-orm/pg-core'

/** Where a list sorted by (created_at, id), newest first, stopped: created_at to the microsecond. */
export interface TimeAndId {
  createdAt: string
  id: string
}

/**
 * created_at as UTC text to the microsecond: a JavaScript Date keeps milliseconds only, and a
 * position rounded to them would skip or repeat rows created within the same millisecond.
 */
export function createdAtText(column: PgColumn): SQL<string> {
  return sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
}

/** Rows strictly after `position` in (created_at, id) descending order; every row without one. */
export function olderThan(createdAt: PgColumn, id: PgColumn, position: TimeAndId | undefined): SQL | undefined {
  return position ? sql`(${createdAt}, ${id}) < (${position.createdAt}::timestamptz, ${position.id})` : undefined
}
