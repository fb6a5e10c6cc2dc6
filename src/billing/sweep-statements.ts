import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from '../db/client'

/**
 * Expires one page of stale holds in one statement: deletes them, gives their amounts back to
 * their wallets' `held`, takes them off their keys' month totals, and writes an `expire` entry
 * each. The statement has a fixed number of parameters however many holds it expires (one
 * parameter per row is what once made a large sweep fail). `skip locked` lets sweeps of
 * several instances run at once without waiting on each other or closing a hold twice.
 * Returns how many holds it expired.
 */
export async function expireHoldsPage(
  database: Pick<DatabaseHandle, 'rows'>,
  options: { now: Date; everyOpenHold: boolean; pageSize: number },
): Promise<number> {
  const now = options.now.toISOString()
  const [row] = await database.rows<{ expired: number }>(sql`
    with expired as (
      delete from holds where id in (
        select id from holds
        where ${options.everyOpenHold}::boolean or expires_at < ${now}::timestamptz
        order by expires_at
        limit ${options.pageSize}::int
        for update skip locked
      )
      returning *
    ),
    wallet_totals as (select wallet_id, sum(amount) as held from expired group by wallet_id),
    wallets_updated as (
      update wallets w set held = w.held - t.held from wallet_totals t where w.id = t.wallet_id
      returning w.id
    ),
    -- Every wallet is updated before any key month, the lock order of every billing statement.
    wallets_done as (select count(*) as n from wallets_updated),
    spend as (
      insert into key_spend (key_id, month, held, charged)
      select key_id, month, -sum(amount), 0 from expired, wallets_done where key_id is not null group by key_id, month
      on conflict (key_id, month) do update set held = key_spend.held + excluded.held
    ),
    entries as (
      insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, hold_id, model, route, created_at)
      -- A credit lease's hold names no model or provider (lease-statements.ts).
      select 'expire', amount, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, id, nullif(model, ''), nullif(route, ''), ${now}::timestamptz
      from expired
    )
    select count(*)::int as expired from expired`)
  return row?.expired ?? 0
}
