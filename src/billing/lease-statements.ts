import { sql } from 'drizzle-orm'
import type { UsageRecord } from '../canonical/usage'
import type { DatabaseHandle } from '../db/client'
import { FixedStatement } from '../db/fixed-statement'
import type { Payer } from './payer'
import { hasQuota, PERIODS, type PeriodKeys } from './periods'
import { countedPeriods } from './spend-rows'
import { rollupHour, upsertRollup } from './usage-rollup'

/**
 * The statements of the credit lease (docs/billing.md#credit-lease): a lease is one hold on a
 * wallet, taken by one instance, from which that instance draws its calls' holds in memory.
 * Each statement is atomic on its own and guards money as the hold statements do.
 */

const bigintParam = (value: bigint) => sql`${value.toString()}::bigint`
const timeParam = (value: Date) => sql`${value.toISOString()}::timestamptz`

export interface LeaseRequest {
  id: string
  /**
   * The wallet's payer. A lease carries no key (every key of the wallet draws from it) unless
   * the payer (a key or a user) has a spend limit: then the lease is that payer's alone and
   * counts in its spend rows of the lease's periods.
   */
  payer: Payer
  /** At most this much is leased... */
  wanted: bigint
  /** ...and never less than this (the call that asked for the lease), else nothing is. */
  minimum: bigint
  /** A lease takes at most this fraction (1/share) of what the wallet has available. */
  share: bigint
  instanceId: string
  periods: PeriodKeys
  now: Date
  expiresAt: Date
  /** A wallet recalled at or after this time takes no new lease (lease-recall.ts). */
  recalledSince: Date
}

/**
 * Takes a lease: the wallet's `held` grows by the grant, which is `wanted` capped at
 * 1/share of the wallet's available credit, but only when that still covers `minimum`; the hold
 * row and its `hold` ledger entry are written in the same statement. A key or user with a spend
 * limit takes a lease of its own: the grant is also capped at 1/share of what its tightest
 * period has left (the limit minus charged and held), and its spend rows of the day, week and
 * month grow by it, so the lease counts against the limits like the holds it stands for. Returns
 * the grant, or 0n when the wallet (or the payer's periods) is too low to lease or was recalled
 * lately (the caller then holds exactly).
 */
export async function takeLeaseAtomically(database: Pick<DatabaseHandle, 'rows'>, lease: LeaseRequest): Promise<bigint> {
  const { payer, periods } = lease
  const spenderId = hasQuota(payer.quotas) ? payer.spenderId : null
  // The payer's spend rows: made first if missing (a statement of its own: a row written in a
  // statement is not visible to the rest of it), then locked after the wallet, the lock order of
  // every billing statement, to see what they have left.
  if (spenderId !== null) {
    await database.rows(sql`insert into key_spend (key_id, month, held, charged)
      values (${spenderId}, ${periods.day}, 0, 0), (${spenderId}, ${periods.week}, 0, 0), (${spenderId}, ${periods.month}, 0, 0) on conflict do nothing`)
  }
  const limitOf = sql.join(
    PERIODS.map((period) => {
      const limit = payer.quotas[period]
      return sql`when ${periods[period]} then ${limit === null ? null : limit.toString()}::bigint`
    }),
    sql` `,
  )
  const room =
    spenderId !== null
      ? sql`(select min((case locked.month ${limitOf} end) - locked.charged - locked.held) from (
          select month, charged, held from key_spend where key_id = ${spenderId} and month in (${periods.day}, ${periods.week}, ${periods.month}) order by month for update
        ) as locked)`
      : sql`null::bigint`
  const [row] = await database.rows<{ granted: string }>(sql`
    with wallet_row as (
      select id, balance - held as available from wallets where id = ${payer.walletId}
        and (leases_recalled_at is null or leases_recalled_at < ${timeParam(lease.recalledSince)})
      for update
    ),
    offer as (
      select id, least(${bigintParam(lease.wanted)}, available / ${bigintParam(lease.share)}, ${room} / ${bigintParam(lease.share)}) as granted
      from wallet_row
    ),
    wallet as (
      update wallets w set held = w.held + offer.granted from offer
      where w.id = offer.id and offer.granted >= ${bigintParam(lease.minimum)}
      returning offer.granted
    ),
    spend as (
      update key_spend s set held = s.held + wallet.granted from wallet
      where s.key_id = ${spenderId} and s.month in (${periods.day}, ${periods.week}, ${periods.month})
    ),
    new_hold as (
      insert into holds (id, request_id, wallet_id, payer_type, account_id, key_id, user_id, user_sub, env, amount, model, route, instance_id, month, week, day, created_at, expires_at)
      select ${lease.id}, ${lease.id}, ${payer.walletId}, ${payer.type}, ${payer.accountId}, ${spenderId === null ? null : payer.keyId}, ${payer.type === 'user_allotment' ? payer.ownerId : null},
        ${payer.userSub}, ${spenderId === null ? null : payer.env}, granted, '', '', ${lease.instanceId}, ${periods.month},
        ${spenderId === null ? null : periods.week}, ${spenderId === null ? null : periods.day}, ${timeParam(lease.now)}, ${timeParam(lease.expiresAt)}
      from wallet
    ),
    entry as (
      insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, hold_id, created_at)
      select 'hold', granted, ${payer.walletId}, ${payer.type}, ${payer.accountId}, ${spenderId === null ? null : payer.keyId}, ${payer.userSub}, ${spenderId === null ? null : payer.env}, ${lease.id}, ${lease.id}, ${timeParam(lease.now)}
      from wallet
    )
    select granted::text from wallet`)
  return row ? BigInt(row.granted) : 0n
}

/** One call drawn from a lease, settled. */
export interface LeasedCharge {
  leaseId: string
  /** An earlier attempt may have committed it (its answer lost): the ledger is checked for its entry. */
  retried: boolean
  payer: Payer
  requestId: string
  /** The call's session (docs/billing.md#attribution), null without one. */
  sessionId: string | null
  /** The periods the call's hold was taken in: its charge counts in these, unless its lease counted it already. */
  periods: PeriodKeys
  /** What the call cost; `charged` is that capped at the call's draw. */
  cost: bigint
  charged: bigint
  usage: UsageRecord | null
  model: string
  provider: string
}

/** A charge's columns as the billing statements read them from their JSON input. */
export function chargeColumns(item: Omit<LeasedCharge, 'leaseId' | 'retried'>) {
  return {
    wallet_id: item.payer.walletId,
    payer_type: item.payer.type,
    account_id: item.payer.accountId,
    key_id: item.payer.keyId,
    user_sub: item.payer.userSub,
    env: item.payer.env,
    request_id: item.requestId,
    session_id: item.sessionId,
    cost: item.cost.toString(),
    charged: item.charged.toString(),
    usage: item.usage,
    model: item.model,
    provider: item.provider,
    spender_id: item.payer.spenderId,
    month: item.periods.month,
    week: item.periods.week,
    day: item.periods.day,
  }
}

/**
 * Charges calls drawn from leases: each lease's amount, its wallet's balance and `held` go down
 * by the sum charged (so the wallet's available credit does not move: the lease had it held),
 * the payers' spend by period and the usage rollup follow (a charge of a lease that counted in
 * its payer's spend rows moves from `held` to `charged` there), and each call gets its `charge` entry,
 * naming the lease as its hold. A lease that is gone (expired by a sweep after its instance
 * could not renew it for the hold TTL) is left out and moves no money: its calls are charged by
 * chargeLapsedCallsAtomically (lapsed-charges.ts) instead. A call already charged (an earlier
 * attempt committed and its answer was lost) is left out too. Returns the leases charged.
 */
export async function chargeLeasesAtomically(database: Pick<DatabaseHandle, 'rows'>, items: LeasedCharge[], now: Date): Promise<Set<string>> {
  const input = JSON.stringify(items.map((item) => ({ lease_id: item.leaseId, retried: item.retried, ...chargeColumns(item) })))
  const rows = await database.rows<{ id: string }>(CHARGE_LEASES.with({ input, now: now.toISOString(), hour: rollupHour(now).toISOString() }))
  return new Set(rows.map((row) => row.id))
}

const CHARGE_LEASES = new FixedStatement(
  () => sql`
    with given as (
      select * from jsonb_to_recordset(${sql.placeholder('input')}::text::jsonb) as i(lease_id text, retried boolean, wallet_id text, payer_type text, account_id text, key_id text,
        user_sub text, env text, request_id text, session_id text, cost bigint, charged bigint, usage jsonb, model text, provider text,
        spender_id text, month text, week text, day text)
    ),
    -- A call whose charge an earlier attempt committed (its answer lost) is not charged again:
    -- its lease still exists, so nothing else would tell. Its entry names the call and the lease.
    -- Only a retried charge is looked up: a join over the whole ledger on every batch would cost
    -- its size whenever the planner believes the ledger small (a fresh database's cached plan).
    input as (
      select * from given g
      where not (g.retried and exists (select 1 from ledger_entries e where e.request_id = g.request_id and e.hold_id = g.lease_id and e.kind = 'charge'))
    ),
    lease_totals as (select lease_id, sum(charged) as charged from input group by lease_id),
    leases as (
      update holds h set amount = h.amount - t.charged from lease_totals t
      where h.id = t.lease_id and h.amount >= t.charged
      returning h.id, h.wallet_id, h.key_id as lease_key_id, h.month as lease_month, h.week as lease_week, h.day as lease_day,
        (h.day is not null or h.key_id is not null) as counted
    ),
    charged as (select i.*, l.lease_month, l.lease_week, l.lease_day, l.counted from input i join leases l on l.id = i.lease_id),
    wallet_totals as (select wallet_id, sum(charged) as charged from charged group by wallet_id),
    wallets_updated as (
      update wallets w set held = w.held - t.charged, balance = w.balance - t.charged from wallet_totals t where w.id = t.wallet_id
      returning w.id
    ),
    -- The lock order of every billing statement: holds, wallets, key months, rollups.
    wallets_done as (select count(*) as n from wallets_updated),
    -- A lease of a payer with a spend limit counted in its spend rows (spend-rows.ts): what it
    -- charges moves from held to charged there. Other calls' charges join their own periods.
    spend as (
      insert into key_spend (key_id, month, held, charged)
      select c.spender_id, p.period, sum(p.held), sum(c.charged)
      from charged c cross join lateral (values
          (case when c.counted then c.lease_month else c.month end, case when c.counted then -c.charged else 0 end),
          (case when c.counted and c.lease_week is not null then c.lease_week else c.week end, case when c.counted and c.lease_week is not null then -c.charged else 0 end),
          (case when c.counted and c.lease_day is not null then c.lease_day else c.day end, case when c.counted and c.lease_day is not null then -c.charged else 0 end)
        ) as p(period, held), wallets_done
      where c.spender_id is not null
      group by 1, 2 order by 1, 2
      on conflict (key_id, month) do update set held = key_spend.held + excluded.held, charged = key_spend.charged + excluded.charged
      returning key_id
    ),
    spend_done as (select count(*) as n from spend),
    rollup as (${upsertRollup({ source: 'charged', after: 'spend_done', hour: sql.placeholder('hour'), charged: 'charged', uncollected: 'cost - charged' })}
    ),
    entries as (
      insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, hold_id, model, route, usage, uncollected, created_at)
      select 'charge', charged, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, lease_id, model, provider, usage, cost - charged, ${sql.placeholder('now')}::timestamptz
      from charged
    )
    select id from leases`,
)

/** What is given back of a lease: part of it, or `all` that is left of it (its hold row goes). */
export type LeaseReturn = bigint | 'all'

/**
 * Gives back part of a lease (`amount`), or all that is left of it: the wallet's `held` goes
 * down by as much and a `release` entry records it. Returns what was given back; 0n when the
 * lease is gone (a sweep expired it and gave its amount back).
 */
export async function releaseLeaseAtomically(database: Pick<DatabaseHandle, 'rows'>, leaseId: string, amount: LeaseReturn, now: Date): Promise<bigint> {
  const columns = sql`id, wallet_id, payer_type, account_id, key_id, user_id, user_sub, env, request_id, month, week, day`
  const lease =
    amount === 'all'
      ? sql`delete from holds where id = ${leaseId} returning ${columns}, amount as released`
      : sql`update holds set amount = amount - ${bigintParam(amount)} where id = ${leaseId} and amount >= ${bigintParam(amount)}
          returning ${columns}, ${bigintParam(amount)} as released`
  const [row] = await database.rows<{ released: string }>(sql`
    with lease as (${lease}),
    wallet as (update wallets w set held = w.held - lease.released from lease where w.id = lease.wallet_id returning w.id),
    wallet_done as (select count(*) as n from wallet),
    -- A lease that counted in its payer's spend rows gives back what it counted there (spend-rows.ts).
    spend as (
      update key_spend s set held = s.held - lease.released from lease ${countedPeriods('lease')}, wallet_done
      where s.key_id = counted.spender_id and s.month = counted.period
    ),
    entry as (
      insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, hold_id, created_at)
      select 'release', released, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, id, ${timeParam(now)} from lease where released > 0
    )
    select released::text from lease`)
  return row ? BigInt(row.released) : 0n
}
