import { sql } from 'drizzle-orm'
import type { UsageRecord } from '../canonical/usage'
import type { DatabaseHandle } from '../db/client'
import { FixedStatement } from '../db/fixed-statement'
import type { Hold } from './hold'
import { countedPeriods } from './spend-rows'
import { rollupHour, upsertRollup } from './usage-rollup'

/**
 * The hot path of billing as single statements: each is atomic on its own and costs one round
 * trip, where a transaction of separate statements would cost eight. Each guards money with the
 * same conditions as the locking path (a wallet's balance never below what it holds).
 *
 * The `route` column of holds and ledger entries holds the provider's name; the statements'
 * inputs call it `provider`, as the code does.
 */

/** Where a run's value goes in a fixed statement (bigints and times are sent as text, and cast). */
const value = (name: string) => sql.placeholder(name)

const TAKE_HOLDS = new FixedStatement(
  () => sql`
    with input as (
      select * from jsonb_to_recordset(${value('input')}::text::jsonb) as i(id text, request_id text, session_id text, wallet_id text, payer_type text, account_id text,
        key_id text, user_id text, user_sub text, env text, amount bigint, model text, provider text, spender_id text, month text, week text, day text)
    ),
    wallet as (
      update wallets set held = held + ${value('total')}::bigint
      where id = ${value('walletId')} and balance - held >= ${value('total')}::bigint
      returning id
    ),
    new_holds as (
      insert into holds (id, request_id, session_id, wallet_id, payer_type, account_id, key_id, user_id, user_sub, env, amount, model, route, instance_id, month, week, day, created_at, expires_at)
      select id, request_id, session_id, wallet_id, payer_type, account_id, key_id, user_id, user_sub, env, amount, model, provider, ${value('instanceId')}, month, week, day, ${value('now')}::timestamptz, ${value('expiresAt')}::timestamptz
      from input where exists (select 1 from wallet)
    ),
    entries as (
      insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, hold_id, model, route, created_at)
      select 'hold', amount, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, id, model, provider, ${value('now')}::timestamptz
      from input where exists (select 1 from wallet)
    ),
    -- The payer's spend rows of the hold's day, week and month (billing/periods.ts).
    spend as (
      insert into key_spend (key_id, month, charged, held)
      select i.spender_id, p.period, 0, sum(i.amount) from input i cross join lateral (values (i.day), (i.week), (i.month)) as p(period)
      where i.spender_id is not null and exists (select 1 from wallet) group by 1, 2 order by 1, 2
      on conflict (key_id, month) do update set held = key_spend.held + excluded.held
    )
    select count(*)::int as taken from wallet`,
)

/**
 * Takes every hold of one wallet, all or none: the wallet's `held` grows by their sum only if
 * it stays within the balance, and the holds, their ledger entries and their payers' spend by
 * period are written in the same statement. Returns false when the wallet cannot cover them all.
 */
export async function takeHoldsAtomically(
  database: Pick<DatabaseHandle, 'rows'>,
  walletId: string,
  group: Hold[],
  instanceId: string,
  now: Date,
  expiresAt: Date,
): Promise<boolean> {
  const total = group.reduce((sum, hold) => sum + hold.amount, 0n)
  // One JSON parameter and constant SQL text: the statement is parsed and planned once per connection.
  const input = JSON.stringify(
    group.map((hold) => ({
      id: hold.id,
      request_id: hold.requestId,
      session_id: hold.sessionId ?? null,
      wallet_id: hold.payer.walletId,
      payer_type: hold.payer.type,
      account_id: hold.payer.accountId,
      key_id: hold.payer.keyId,
      user_id: hold.payer.type === 'user_allotment' ? hold.payer.ownerId : null,
      user_sub: hold.payer.userSub,
      env: hold.payer.env,
      amount: hold.amount.toString(),
      model: hold.model,
      provider: hold.provider,
      spender_id: hold.payer.spenderId,
      month: hold.periods.month,
      week: hold.periods.week,
      day: hold.periods.day,
    })),
  )
  const [row] = await database.rows<{ taken: number }>(
    TAKE_HOLDS.with({ input, total: total.toString(), walletId, instanceId, now: now.toISOString(), expiresAt: expiresAt.toISOString() }),
  )
  return (row?.taken ?? 0) > 0
}

export interface ClosingInput {
  hold: Hold
  cost: bigint
  usage: UsageRecord | null
  model: string
  provider: string
}

/**
 * Closes holds that are still open, deleting them: the charge (the cost capped at the hold) leaves the balance,
 * the whole hold leaves `held`, and the charge and release entries are written, with their hour's
 * usage rollup, in one statement. In the spend rows the hold counted in (spend-rows.ts), the hold
 * leaves `held` and its charge joins `charged`: a charge counts in the periods its hold was taken
 * in, whose limits it was checked against. Returns the ids it closed; a hold already expired by a
 * sweep is not among them and moves no money.
 */
export async function closeHoldsAtomically(database: Pick<DatabaseHandle, 'rows'>, items: ClosingInput[], now: Date): Promise<Set<string>> {
  const input = JSON.stringify(
    items.map((item) => ({
      hold_id: item.hold.id,
      cost: item.cost.toString(),
      usage: item.usage,
      model: item.model,
      provider: item.provider,
      billed: item.cost > 0n || item.usage !== null,
    })),
  )
  const rows = await database.rows<{ id: string }>(CLOSE_HOLDS.with({ input, now: now.toISOString(), hour: rollupHour(now).toISOString() }))
  return new Set(rows.map((row) => row.id))
}

const CLOSE_HOLDS = new FixedStatement(
  () => sql`
    with input as (
      select * from jsonb_to_recordset(${value('input')}::text::jsonb) as i(hold_id text, cost bigint, usage jsonb, model text, provider text, billed boolean)
    ),
    closed as (
      delete from holds h using input i where h.id = i.hold_id
      returning h.id, h.wallet_id, h.payer_type, h.account_id, h.key_id, h.user_id, h.user_sub, h.env, h.request_id, h.session_id, h.amount, h.month, h.week, h.day,
        i.cost, i.usage, i.model, i.provider, i.billed, least(i.cost, h.amount) as charged
    ),
    wallet_totals as (select wallet_id, sum(amount) as held, sum(charged) as charged from closed group by wallet_id),
    wallets_updated as (
      update wallets w set held = w.held - t.held, balance = w.balance - t.charged from wallet_totals t where w.id = t.wallet_id
      returning w.id
    ),
    -- Reading every updated wallet first makes the lock order wallets, then key months, as in
    -- every other billing statement: two orders could deadlock.
    wallets_done as (select count(*) as n from wallets_updated),
    spend as (
      insert into key_spend (key_id, month, held, charged)
      select counted.spender_id, counted.period, -sum(c.amount), sum(c.charged)
      from closed c ${countedPeriods('c')}, wallets_done
      group by 1, 2 order by 1, 2
      on conflict (key_id, month) do update set held = key_spend.held + excluded.held, charged = key_spend.charged + excluded.charged
      returning key_id
    ),
    -- Rollup rows are locked last, after the wallets and key months (and in key order within).
    spend_done as (select count(*) as n from spend),
    rollup as (${upsertRollup({ source: 'closed', after: 'spend_done', where: 'billed', hour: value('hour'), charged: 'charged', uncollected: 'cost - charged' })}
    ),
    entries as (
      insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, hold_id, model, route, usage, uncollected, created_at)
      select 'charge', charged, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, id, model, provider, usage, cost - charged, ${value('now')}::timestamptz
      from closed where billed
      union all
      select 'release', amount - charged, wallet_id, payer_type, account_id, key_id, user_sub, env, request_id, session_id, id, nullif(model, ''), nullif(provider, ''), null, 0, ${value('now')}::timestamptz
      from closed where amount > charged
    )
    select id from closed`,
)

/**
 * Which of these closings already have their charge entry: an earlier attempt committed, and
 * its answer was lost (a connection dropped, or a statement past its deadline, after the
 * commit). Such a closing landed; it is not a lapsed hold. Returns their request ids.
 */
export async function chargedAlready(database: Pick<DatabaseHandle, 'rows'>, requestIds: string[]): Promise<Set<string>> {
  // By request id alone: a call has one charge entry, naming its hold, its lease, or (charged
  // after its hold lapsed) none.
  const rows = await database.rows<{ request_id: string }>(sql`
    select distinct request_id from ledger_entries
    where kind = 'charge' and request_id in (select jsonb_array_elements_text(${JSON.stringify(requestIds)}::text::jsonb))`)
  return new Set(rows.map((row) => row.request_id))
}
