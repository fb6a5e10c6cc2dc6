import { sql } from 'drizzle-orm'
import { creditsJson } from '../billing/money'
import type { Database } from '../db/database'
import { queryRows, retryingDeadlocks } from '../db/rows'
import { storeEvent } from './events'

/**
 * `balance.low` (docs/operations.md#alerts): a wallet or key allotment whose credit is below its
 * threshold raises one alert per crossing. A `balance_alerts` row records the crossing (its
 * primary key makes it once, whatever the number of instances) and is deleted, arming the alert
 * again, once a top-up lifts the balance back to the threshold, or when the threshold changes.
 *
 * The credit compared is the settled balance: holds of calls still running (or credit leases)
 * reserve a worst case that is mostly given back, and would raise alerts that settle away.
 */

/** The wallets and allotments with a threshold, read through the partial indexes on the thresholds. */
const PAYERS = sql`payers as (
    select w.id as wallet_id, w.kind, w.owner_id, a.id as account_id, w.balance, w.held, a.low_balance_threshold as threshold
    from accounts a join wallets w on w.kind = 'wallet' and w.owner_id = a.id
    where a.low_balance_threshold is not null
    union all
    select w.id, w.kind, w.owner_id, k.account_id, w.balance, w.held, k.low_balance_threshold
    from api_keys k join wallets w on w.kind = 'key_allotment' and w.owner_id = k.id
    where k.low_balance_threshold is not null
  )`

interface CrossedRow {
  wallet_id: string
  kind: string
  owner_id: string
  account_id: string
  balance: string
  held: string
  threshold: string
}

/** Arms again the alerts whose payer is back at its threshold, raises those of payers newly below it; returns how many were raised. */
export async function raiseBalanceAlerts(db: Database, now: Date): Promise<number> {
  return retryingDeadlocks(() =>
    db.transaction(async (tx) => {
      await queryRows(
        tx,
        sql`with ${PAYERS}
          delete from balance_alerts b where not exists (
            select 1 from payers p where p.wallet_id = b.wallet_id and p.balance < p.threshold and p.threshold = b.threshold)`,
      )
      const crossed = await queryRows<CrossedRow>(
        tx,
        sql`with ${PAYERS},
          fired as (
            insert into balance_alerts (wallet_id, threshold, created_at)
            select wallet_id, threshold, ${now.toISOString()}::timestamptz from payers where balance < threshold
            on conflict do nothing
            returning wallet_id
          )
          select p.wallet_id, p.kind, p.owner_id, p.account_id, p.balance::text as balance, p.held::text as held, p.threshold::text as threshold
          from payers p join fired f on f.wallet_id = p.wallet_id`,
      )
      for (const row of crossed) {
        const balance = BigInt(row.balance)
        await storeEvent(
          tx,
          'balance.low',
          {
            payer: { type: row.kind, id: row.owner_id },
            account_id: row.account_id,
            balance: creditsJson(balance),
            available: creditsJson(balance - BigInt(row.held)),
            threshold: creditsJson(BigInt(row.threshold)),
          },
          now,
        )
      }
      return crossed.length
    }),
  )
}
