import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from '../db/client'
import { chargeColumns, type LeasedCharge } from './lease-statements'
import { rollupHour, upsertRollup } from './usage-rollup'

/** A call to charge after its hold lapsed: what a lease's charge carries, less the lease. */
export type LapsedCharge = Omit<LeasedCharge, 'leaseId' | 'retried'>

/**
 * Charges calls whose hold was gone when their charge landed (docs/billing.md#database-outages):
 * a sweep expired the hold, or the credit lease it was drawn from, while its instance could not
 * reach the database, and gave the amount back to the payer. Each call is charged what it would
 * have taken from its hold, now from the payer's available credit (balance minus held), in the
 * order given; what that credit cannot cover is recorded as `uncollected`, so no payer goes
 * below what it holds. A `charge` entry each, naming no hold (the hold's own entries already
 * balance: hold, then expire), the payers' spend in the periods of the calls' holds and the
 * usage rollup follow in the same statement. Returns what each call was charged, in order.
 */
export async function chargeLapsedCallsAtomically(database: Pick<DatabaseHandle, 'rows'>, items: LapsedCharge[], now: Date): Promise<bigint[]> {
  const input = JSON.stringify(items.map((item, position) => ({ seq: position, ...chargeColumns(item) })))
  const rows = await database.rows<{ seq: number; collected: string }>(sql`
    with input as (
      select * from jsonb_to_recordset(${input}::text::jsonb) as i(seq int, wallet_id text, payer_type text, account_id text, key_id text,
        user_sub text, env text, request_id text, session_id text, cost bigint, charged bigint, usage jsonb, model text, provider text,
        spender_id text, month text, week text, day text)
    ),
    -- Locked, so the available credit read is the wallet's latest, not the statement's snapshot.
    locked as (
      select id, balance - held as available from wallets where id in (select wallet_id from input) order by id for update
    ),
    priced as (
      select i.*, greatest(0, least(i.charged,
        l.available - (sum(i.charged) over (partition by i.wallet_id order by i.seq) - i.charged))) as collected
      from input i join locked l on l.id = i.wallet_id
    ),
    wallet_totals as (select wallet_id, sum(collected) as collected from priced group by wallet_id),
    wallets_updated as (
      update wallets w set balance = w.balance - t.collected from wallet_totals t where w.id = t.wallet_id and t.collected > 0
      returning w.id
    ),
    -- The lock order of every billing statement: wallets, key months, rollups.
    wallets_done as (select count(*) as n from wallets_updated),
    spend as (
      insert into key_spend (key_id, month, held, charged)
      select i.spender_id, p.period, 0, sum(i.collected) from priced i cross join lateral (values (i.day), (i.week), (i.month)) as p(period), wallets_done
      where i.spender_id is not null group by 1, 2 order by 1, 2
      on conflict (key_id, month) do update set charged = key_spend.charged + excluded.charged
      returning key_id
    ),
    spend_done as (select count(*) as n from spend),
    rollup as (${upsertRollup({ source: 'priced', after: 'spend_done', hour: rollupHour(now).toISOString(), charged: 'collected', uncollected: 'cost - collected' })}
    ),
    entries as (
      insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, hold_id, model, route, usage, uncollected, created_at)
      select 'charge', collected, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, null, model, provider, usage, cost - collected,
        ${now.toISOString()}::timestamptz
      from priced
    )
    select seq, collected::text as collected from priced`)
  const byPosition = new Map(rows.map((row) => [Number(row.seq), BigInt(row.collected)]))
  // A call whose wallet is gone (never: wallets are not deleted) is charged nothing.
  return items.map((_, position) => byPosition.get(position) ?? 0n)
}
