import { sql } from 'drizzle-orm'
import { monthKey } from '../billing/hold-rows'
import type { Database } from '../db/database'
import { queryRows } from '../db/rows'
import { QUOTA_PERCENTS, type QuotaSpend } from './quota-thresholds'

interface KeyMonthRow {
  key_id: string
  account_id: string
  quota: string
  charged: string
  recorded: number
}

/**
 * The spend of keys with a monthly quota that has reached a threshold not yet alerted this month,
 * as quota spends (quota-thresholds.ts): `spentBefore` is where the last alerted threshold lies,
 * `spentAfter` the month's settled charges. Open holds are not spend: a call's worst case is
 * mostly given back. Keys whose alerts are all raised are not read again.
 */
export async function monthlyKeyQuotaSpends(db: Database, now: Date): Promise<QuotaSpend[]> {
  const month = monthKey(now)
  const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
  const [first, second, last] = QUOTA_PERCENTS
  const rows = await queryRows<KeyMonthRow>(
    db,
    sql`select key_id, account_id, quota, charged, recorded from (
        select k.id as key_id, k.account_id, k.monthly_quota::text as quota, s.charged::text as charged, k.monthly_quota as quota_micros, s.charged as charged_micros,
          coalesce((select max(q.percent) from quota_alerts q
            where q.scope = 'key' and q.subject_id = k.id and q.period = 'month' and q.period_start = ${periodStart.toISOString()}), 0) as recorded
        from api_keys k join key_spend s on s.key_id = k.id and s.month = ${month}
        where k.monthly_quota is not null and k.monthly_quota > 0 and s.charged * 100 >= k.monthly_quota * ${first}::int
      ) candidates
      where recorded < ${last}::int and charged_micros * 100 >= quota_micros * (case when recorded < ${first}::int then ${first}::int when recorded < ${second}::int then ${second}::int else ${last}::int end)`,
  )
  return rows.map((row) => {
    const quota = BigInt(row.quota)
    return {
      scope: 'key',
      subjectId: row.key_id,
      keyId: row.key_id,
      accountId: row.account_id,
      period: 'month',
      periodStart,
      quota,
      spentBefore: (quota * BigInt(row.recorded)) / 100n,
      spentAfter: BigInt(row.charged),
    }
  })
}
