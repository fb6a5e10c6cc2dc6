import { and, eq, gte, sql } from 'drizzle-orm'
import type { Queryable } from '../db/client'
import { ledgerEntries } from '../db/schema'

/** Start of the calendar month (UTC) that `now` falls in: quotas reset then. */
export function monthStart(now: number): Date {
  const date = new Date(now)
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1))
}

/** Micro-credits charged to a key since the start of this month. */
export async function monthSpent(db: Queryable, keyId: string, now: number): Promise<bigint> {
  const [row] = await db
    .select({ total: sql<string>`coalesce(sum(${ledgerEntries.amount}), 0)::text` })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.keyId, keyId), eq(ledgerEntries.kind, 'charge'), gte(ledgerEntries.createdAt, monthStart(now))))
  return BigInt(row?.total ?? '0')
}
