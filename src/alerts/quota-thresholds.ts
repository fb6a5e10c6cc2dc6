import { sql } from 'drizzle-orm'
import { creditsJson } from '../billing/money'
import type { Database } from '../db/database'
import { queryRows, retryingDeadlocks } from '../db/rows'
import { storeEvent } from './events'

/** The percentages of a quota that raise a `quota.threshold` alert, once each per period. */
export const QUOTA_PERCENTS = [50, 80, 100] as const

/**
 * One quota's spend in one period, before and after some charges: what a source of spend hands
 * to the quota alerts (docs/operations.md#alerts). Whatever keeps a period's spend (the monthly
 * key quota here, and quotas of other periods or of users) reports it in this one shape.
 */
export interface QuotaSpend {
  scope: 'key' | 'user'
  /** The key's id (scope `key`) or the user's id (scope `user`): whose quota it is. */
  subjectId: string
  keyId?: string
  accountId?: string
  iss?: string
  sub?: string
  period: 'day' | 'week' | 'month'
  /** The period's first instant (UTC). */
  periodStart: Date
  /** Micro-credits. */
  quota: bigint
  spentBefore: bigint
  spentAfter: bigint
}

/** The thresholds the spend passed from before to after: an in-memory comparison, with no database. */
export function crossedPercents(spend: Pick<QuotaSpend, 'quota' | 'spentBefore' | 'spentAfter'>): number[] {
  if (spend.quota <= 0n) return []
  const reached = (spent: bigint, percent: number) => spent * 100n >= spend.quota * BigInt(percent)
  return QUOTA_PERCENTS.filter((percent) => !reached(spend.spentBefore, percent) && reached(spend.spentAfter, percent))
}

/**
 * Raises the alerts of the thresholds each spend crossed, each once per threshold per period
 * (a `quota_alerts` row per threshold: its primary key keeps a second instance, or a second
 * report, from raising it again). Returns how many were raised.
 */
export async function raiseQuotaAlerts(db: Database, spends: readonly QuotaSpend[], now: Date): Promise<number> {
  const crossings = spends.flatMap((spend) => crossedPercents(spend).map((percent) => ({ spend, percent })))
  if (crossings.length === 0) return 0
  return retryingDeadlocks(() =>
    db.transaction(async (tx) => {
      let raised = 0
      for (const { spend, percent } of crossings) {
        const periodStart = spend.periodStart.toISOString()
        const fresh = await queryRows(
          tx,
          sql`insert into quota_alerts (scope, subject_id, period, period_start, percent, created_at)
            values (${spend.scope}, ${spend.subjectId}, ${spend.period}, ${periodStart}, ${percent}, ${now.toISOString()}::timestamptz)
            on conflict do nothing returning percent`,
        )
        if (fresh.length === 0) continue
        await storeEvent(tx, 'quota.threshold', quotaData(spend, percent), now)
        raised++
      }
      return raised
    }),
  )
}

function quotaData(spend: QuotaSpend, percent: number) {
  return {
    scope: spend.scope,
    ...(spend.keyId === undefined ? {} : { key_id: spend.keyId }),
    ...(spend.accountId === undefined ? {} : { account_id: spend.accountId }),
    ...(spend.iss === undefined ? {} : { iss: spend.iss }),
    ...(spend.sub === undefined ? {} : { sub: spend.sub }),
    period: spend.period,
    period_start: spend.periodStart.toISOString(),
    quota: creditsJson(spend.quota),
    spent: creditsJson(spend.spentAfter),
    percent,
  }
}
