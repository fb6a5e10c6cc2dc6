import { sql } from 'drizzle-orm'
import { type Period, periodKeys, periodStart } from '../billing/periods'
import type { Database } from '../db/database'
import { queryRows } from '../db/rows'
import { QUOTA_PERCENTS, type QuotaSpend } from './quota-thresholds'

interface SpendRow {
  scope: 'key' | 'user'
  subject_id: string
  account_id: string | null
  issuer: string | null
  subject: string | null
  period: Period
  quota: string
  charged: string
  recorded: number
}

/**
 * The spend of keys and users whose quota in the current day, week or month has reached a
 * threshold not yet alerted, as quota spends (quota-thresholds.ts): `spentBefore` is where the
 * last alerted threshold lies, `spentAfter` the period's settled charges (open holds are not
 * spend: a call's worst case is mostly given back). It reads only the current periods' spend
 * rows (one per spender that spent in them), so its cost follows the active spenders, not the
 * number of keys or users. A user with limits of their own counts against those only;
 * otherwise the users' default applies (docs/billing.md#spend-limits-by-period).
 */
export async function periodQuotaSpends(db: Database, now: Date): Promise<QuotaSpend[]> {
  const keys = periodKeys(now)
  const [first, second, last] = QUOTA_PERCENTS
  const rows = await queryRows<SpendRow>(
    db,
    sql`with spend as (
        select s.key_id as spender, p.period, s.charged
        from key_spend s
        join (values ('day', ${keys.day}), ('week', ${keys.week}), ('month', ${keys.month})) as p(period, period_key) on s.month = p.period_key
        where s.charged > 0
      ),
      quotas as (
        select 'key' as scope, k.id as subject_id, k.account_id, null::text as issuer, null::text as subject, spend.period, spend.charged,
          case spend.period when 'day' then k.day_quota when 'week' then k.week_quota else k.monthly_quota end as quota
        from spend join api_keys k on k.id = spend.spender
        union all
        select 'user', u.id, null, u.issuer, u.subject, spend.period, spend.charged,
          case when u.day_quota is not null or u.week_quota is not null or u.month_quota is not null
            then case spend.period when 'day' then u.day_quota when 'week' then u.week_quota else u.month_quota end
            else case spend.period when 'day' then d.day_quota when 'week' then d.week_quota else d.month_quota end
          end
        from spend join users u on u.id = spend.spender left join quota_defaults d on d.scope = 'user'
      ),
      reached as (
        select q.*, coalesce((select max(a.percent) from quota_alerts a
          where a.scope = q.scope and a.subject_id = q.subject_id and a.period = q.period
            and a.period_start = case q.period when 'day' then ${periodStart('day', now).toISOString()}
              when 'week' then ${periodStart('week', now).toISOString()} else ${periodStart('month', now).toISOString()} end), 0) as recorded
        from quotas q
        where q.quota is not null and q.quota > 0 and q.charged * 100 >= q.quota * ${first}::int
      )
      select scope, subject_id, account_id, issuer, subject, period, quota::text as quota, charged::text as charged, recorded from reached
      where recorded < ${last}::int
        and charged * 100 >= quota * (case when recorded < ${first}::int then ${first}::int when recorded < ${second}::int then ${second}::int else ${last}::int end)`,
  )
  return rows.map((row) => {
    const quota = BigInt(row.quota)
    return {
      scope: row.scope,
      subjectId: row.subject_id,
      ...(row.scope === 'key'
        ? { keyId: row.subject_id, accountId: row.account_id ?? undefined }
        : { iss: row.issuer ?? undefined, sub: row.subject ?? undefined }),
      period: row.period,
      periodStart: periodStart(row.period, now),
      quota,
      spentBefore: (quota * BigInt(row.recorded)) / 100n,
      spentAfter: BigInt(row.charged),
    }
  })
}
