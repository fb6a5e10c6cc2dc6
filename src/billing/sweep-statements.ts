import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from '../db/client'
import { countedPeriods } from './spend-rows'

/**
 * Expires one page of stale holds in one statement: deletes them, gives their amounts back to
 * their wallets' `held`, takes them off the spend rows they counted in (spend-rows.ts), and writes an `expire` entry
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
      select counted.spender_id, counted.period, -sum(e.amount), 0 from expired e ${countedPeriods('e')}, wallets_done
      group by 1, 2 order by 1, 2
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

/**
 * Deletes the spend rows of past periods (docs/billing.md#spend-limits-by-period): rows of any
 * period other than those `keep` names (the current periods and the ones just before, so an
 * instance whose clock is a little behind still finds its rows) once nothing open counts in
 * them. A later hold of such a period would start it again from 0, which is why the periods just
 * past are kept. Returns how many rows went.
 */
export async function deletePastSpend(database: Pick<DatabaseHandle, 'rows'>, keep: string[]): Promise<number> {
  const [row] = await database.rows<{ deleted: number }>(sql`
    with deleted as (
      delete from key_spend where held = 0 and month not in (select jsonb_array_elements_text(${JSON.stringify(keep)}::text::jsonb))
      returning 1
    )
    select count(*)::int as deleted from deleted`)
  return row?.deleted ?? 0
}
