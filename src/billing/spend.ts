import { and, eq, inArray } from 'drizzle-orm'
import type { Queryable } from '../db/database'
import { periodSpend } from '../db/schema'
import type { Hold } from './hold'
import { PERIODS, type Period, type PeriodKeys, type PeriodQuotas, periodKeys, periodStart } from './periods'

/** What a key or user has committed in one period, in micro-credits: settled charges and open holds. */
export interface Committed {
  charged: bigint
  held: bigint
}

/** The spend of a key or user (`spenderId`) in each of the given periods (docs/billing.md#spend-limits-by-period). */
export async function spendIn(db: Queryable, spenderId: string, periods: PeriodKeys): Promise<Record<Period, Committed>> {
  const rows = await db
    .select({ period: periodSpend.period, charged: periodSpend.charged, held: periodSpend.held })
    .from(periodSpend)
    .where(and(eq(periodSpend.spenderId, spenderId), inArray(periodSpend.period, Object.values(periods))))
  const of = (key: string): Committed => {
    const row = rows.find((candidate) => candidate.period === key)
    return row ? { charged: row.charged, held: row.held } : { charged: 0n, held: 0n }
  }
  return { day: of(periods.day), week: of(periods.week), month: of(periods.month) }
}

/** The spend of a key or user in the periods that `now` falls in. */
export function spendNow(db: Queryable, spenderId: string, now: number): Promise<Record<Period, Committed>> {
  return spendIn(db, spenderId, periodKeys(new Date(now)))
}

/** One period of a key's or user's spend against its limit, as the quota alerts read it. */
export interface PeriodStanding {
  period: Period
  /** When the period began (UTC). */
  periodStart: Date
  /** The limit in micro-credits; null when the period has none. */
  quota: bigint | null
  /** Settled charges in the period, in micro-credits. */
  spent: bigint
  /** Open holds counted in the period, in micro-credits. */
  held: bigint
}

/**
 * After a hold was settled: its payer's (the key's, or the user's) spend and limit in each period
 * its charge counted in, which are the periods the hold was taken in (docs/billing.md#spend-limits-by-period).
 * Read after the charge has landed (HoldBook.settle answers before a leased charge lands; wait
 * with HoldBook.caughtUp first). Empty for a hold that counts in nobody's spend.
 */
export async function standingAfterCharge(db: Queryable, hold: Pick<Hold, 'payer' | 'periods'>): Promise<PeriodStanding[]> {
  const { spenderId, quotas } = hold.payer
  if (spenderId === null) return []
  return standingIn(db, spenderId, quotas, hold.periods)
}

/** A key's or user's spend and limits in the given periods. */
export async function standingIn(db: Queryable, spenderId: string, quotas: PeriodQuotas, periods: PeriodKeys): Promise<PeriodStanding[]> {
  const spend = await spendIn(db, spenderId, periods)
  const day = new Date(`${periods.day}T00:00:00Z`)
  return PERIODS.map((period) => ({
    period,
    periodStart: periodStart(period, day),
    quota: quotas[period],
    spent: spend[period].charged,
    held: spend[period].held,
  }))
}
