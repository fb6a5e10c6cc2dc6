import { and, eq, sql } from 'drizzle-orm'
import type { Queryable } from '../db/database'
import { periodSpend, wallets } from '../db/schema'
import { PERIODS, type PeriodKeys } from './periods'

/** What every hold change needs to know to move money and spend by period. */
export interface HoldRow {
  walletId: string
  /** Whose spend the hold counts in (a key's or a user's id), if anyone's. */
  spenderId: string | null
  amount: bigint
  periods: PeriodKeys
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

/** Applies summed changes to the spend rows of each row's periods, creating rows for periods not seen yet, in key order (the lock order). */
export async function adjustPeriodSpend<Row extends HoldRow>(
  tx: Queryable,
  rows: Row[],
  change: (row: Row) => { held: bigint; charged: bigint },
): Promise<void> {
  const totals = new Map<string, { spenderId: string; period: string; held: bigint; charged: bigint }>()
  for (const row of rows) {
    if (!row.spenderId) continue
    const delta = change(row)
    for (const period of PERIODS) {
      const key = row.periods[period]
      const id = `${row.spenderId}\n${key}`
      const total = totals.get(id) ?? { spenderId: row.spenderId, period: key, held: 0n, charged: 0n }
      totals.set(id, { ...total, held: total.held + delta.held, charged: total.charged + delta.charged })
    }
  }
  for (const [, total] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    if (total.held === 0n && total.charged === 0n) continue
    await tx.insert(periodSpend).values({ spenderId: total.spenderId, period: total.period }).onConflictDoNothing()
    await tx
      .update(periodSpend)
      .set({ held: sql`${periodSpend.held} + ${total.held.toString()}::bigint`, charged: sql`${periodSpend.charged} + ${total.charged.toString()}::bigint` })
      .where(and(eq(periodSpend.spenderId, total.spenderId), eq(periodSpend.period, total.period)))
  }
}
