import { expect } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { Database } from '../../src/db/client'

/**
 * The money invariants of CONTRACT.md §5, checked on the database itself: no wallet below
 * zero, each balance equal to its top-ups minus its charges, each wallet's `held` equal to
 * its open holds, no open hold past its expiry, every closed hold closed exactly once, and
 * (unless `openHolds` is allowed, for checks taken while calls run) no hold left open.
 */
export async function expectBooksBalance(db: Database, options: { openHolds?: boolean } = {}): Promise<void> {
  const rows = async (query: ReturnType<typeof sql>) => {
    const result = await db.execute(query)
    return (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as Record<string, unknown>[]
  }
  expect(await rows(sql`select id from wallets where balance < held or held < 0`)).toEqual([])
  expect(
    await rows(sql`
      select w.id, w.balance::text as balance, coalesce(sum(case when l.kind in ('topup', 'adjustment') then l.amount when l.kind = 'charge' then -l.amount else 0 end), 0)::text as ledger
      from wallets w left join ledger_entries l on l.wallet_id = w.id
      group by w.id, w.balance
      having w.balance <> coalesce(sum(case when l.kind in ('topup', 'adjustment') then l.amount when l.kind = 'charge' then -l.amount else 0 end), 0)`),
  ).toEqual([])
  expect(
    await rows(sql`
      select w.id from wallets w left join holds h on h.wallet_id = w.id
      group by w.id, w.held having w.held <> coalesce(sum(h.amount), 0)`),
  ).toEqual([])
  expect(await rows(sql`select id from holds where expires_at < now()`)).toEqual([])
  if (!options.openHolds) {
    expect(await rows(sql`select id from holds`)).toEqual([])
    expect(await rows(sql`select id from wallets where held <> 0`)).toEqual([])
  }
  // Each closed hold in the ledger: one hold entry, and what it charged plus what it gave back equals what it held.
  expect(
    await rows(sql`
      select hold_id from ledger_entries where hold_id is not null and hold_id not in (select id from holds)
      group by hold_id
      having sum(case when kind = 'hold' then 1 else 0 end) <> 1
          or sum(case when kind in ('charge', 'release', 'expire') then amount else 0 end) <> sum(case when kind = 'hold' then amount else 0 end)`),
  ).toEqual([])
}
