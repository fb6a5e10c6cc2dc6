import { type SQL, sql } from 'drizzle-orm'

/**
 * The spend rows (key_spend: spender and period) an open hold counts in, as SQL the billing
 * statements share (docs/billing.md#spend-limits-by-period). `hold` names a relation with a hold
 * row's columns (key_id, user_id, month, week, day); the fragment is a lateral join adding
 * `counted.spender_id` and `counted.period`, one row per period the hold counts in.
 *
 * A hold counts in its key's spend rows, or its user's: those of the day, week and month it was
 * taken in. A credit lease on a wallet names no key and has no day: it counts in none. A hold
 * taken before the day and week were counted has neither, and counts in its key's month alone.
 */
export function countedPeriods(hold: string): SQL {
  return sql.raw(`cross join lateral (
      select coalesce(${hold}.key_id, ${hold}.user_id) as spender_id, p.period
      from (values (${hold}.month), (${hold}.week), (${hold}.day)) as p(period)
      where p.period is not null and coalesce(${hold}.key_id, ${hold}.user_id) is not null and (${hold}.day is not null or ${hold}.key_id is not null)
    ) as counted`)
}
