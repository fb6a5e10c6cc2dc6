import { and, eq, sql } from 'drizzle-orm'
import type { Queryable } from '../db/database'
import { keySpend, wallets } from '../db/schema'

/** What every hold change needs to know to move money and month totals. */
export interface HoldRow {
  walletId: string
  keyId: string | null
  amount: bigint
  month: string
}

/** `YYYY-MM` of a time, in UTC: the calendar month quotas count in. */
export function monthKey(date: Date): string {
  return date.toISOString().slice(0, 7)
}

/** Applies summed changes to each wallet touched, in id order (the lock order everywhere). */
export async function adjustWallets<Row extends HoldRow>(tx: Queryable, rows: Row[], change: (row: Row) => { held: bigint; balance: bigint }): Promise<void> {
  const totals = new Map<string, { held: bigint; balance: bigint }>()
  for (const row of rows) {
    const delta = change(row)
    const total = totals.get(row.walletId) ?? { held: 0n, balance: 0n }
    totals.set(row.walletId, { held: total.held + delta.held, balance: total.balance + delta.balance })
  }
  for (const [walletId, delta] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    if (delta.held === 0n && delta.balance === 0n) continue
    await tx
      .update(wallets)
      .set({ held: sql`${wallets.held} + ${delta.held.toString()}::bigint`, balance: sql`${wallets.balance} + ${delta.balance.toString()}::bigint` })
      .where(eq(wallets.id, walletId))
  }
}

/** Applies summed changes to each key's month rows, creating rows for months not seen yet. */
export async function adjustKeySpend<Row extends HoldRow>(
  tx: Queryable,
  rows: Row[],
  change: (row: Row) => { month: string; held: bigint; charged: bigint }[],
): Promise<void> {
  const totals = new Map<string, { keyId: string; month: string; held: bigint; charged: bigint }>()
  for (const row of rows) {
    if (!row.keyId) continue
    for (const delta of change(row)) {
      const id = `${row.keyId}\n${delta.month}`
      const total = totals.get(id) ?? { keyId: row.keyId, month: delta.month, held: 0n, charged: 0n }
      totals.set(id, { ...total, held: total.held + delta.held, charged: total.charged + delta.charged })
    }
  }
  for (const [, total] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    if (total.held === 0n && total.charged === 0n) continue
    await tx.insert(keySpend).values({ keyId: total.keyId, month: total.month }).onConflictDoNothing()
    await tx
      .update(keySpend)
      .set({ held: sql`${keySpend.held} + ${total.held.toString()}::bigint`, charged: sql`${keySpend.charged} + ${total.charged.toString()}::bigint` })
      .where(and(eq(keySpend.keyId, total.keyId), eq(keySpend.month, total.month)))
  }
}
