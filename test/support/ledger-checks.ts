import { expect } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { Database } from '../../src/db/database'

/**
 * The money invariants of docs/billing.md, checked on the database itself: no wallet below
 * zero, each balance equal to its top-ups minus its charges, each wallet's `held` equal to
 * its open holds, no open hold past its expiry, every closed hold closed exactly once, and
 * (unless `openHolds` is allowed, for checks taken while calls run) no hold left open once
 * credit leases had their 2 s to be given back.
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
    // Credit leases are given back within 2 s of a wallet's last call (docs/billing.md#credit-lease).
    for (let waited = 0; waited < 3_000 && (await rows(sql`select id from holds limit 1`)).length > 0; waited += 50) await Bun.sleep(50)
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
  await expectRollupMatchesLedger(db)
}

/**
 * The usage rollup equals the sums over the ledger's charge entries, group by group (hour,
 * account, key, user, model): computed here from the ledger in SQL of its own. A token count
 * counts when it is a whole non-negative number (docs/billing.md#usage-rollups); usage marked
 * invalid may carry anything.
 */
export async function expectRollupMatchesLedger(db: Database): Promise<void> {
  const counted = (field: string) => {
    const value = `(usage->>'${field}')::numeric`
    return sql.raw(
      `case when jsonb_typeof(usage->'${field}') = 'number' then (case when ${value} >= 0 and mod(${value}, 1) = 0 then ${value} else 0 end) else 0 end`,
    )
  }
  const result = await db.execute(sql`
    with ledger as (
      select date_trunc('hour', created_at, 'UTC') as hour, coalesce(account_id, '') as account_id, coalesce(key_id, '') as key_id,
        coalesce(user_sub, '') as user_sub, coalesce(model, '') as model, coalesce(session_id, '') as session_id, count(*)::bigint as requests,
        sum(${counted('input_tokens')}) as input_tokens,
        sum(${counted('output_tokens')}) as output_tokens,
        sum(${counted('cache_read_tokens')}) as cache_read_tokens,
        sum(${counted('cache_write_tokens')}) as cache_write_tokens,
        sum(${counted('cache_write_1h_tokens')}) as cache_write_1h_tokens,
        sum(amount)::numeric as cost, sum(uncollected)::numeric as uncollected
      from ledger_entries where kind = 'charge' group by 1, 2, 3, 4, 5, 6
    ),
    rollup as (
      select hour, account_id, key_id, user_sub, model, session_id, requests, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, cost, uncollected from usage_rollups
    )
    select * from ((select * from ledger except select * from rollup) union all (select * from rollup except select * from ledger)) differences`)
  const differences = Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows
  expect(differences).toEqual([])
}
