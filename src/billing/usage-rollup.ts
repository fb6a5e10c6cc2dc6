import { type Placeholder, type SQL, sql } from 'drizzle-orm'

/**
 * The per-hour usage rollup (docs/billing.md#usage-rollups) as SQL fragments for the statements
 * that write charge entries: each of them upserts the rollup in the same statement, so a charge
 * and its rollup are written together or not at all.
 */

/** The token counts a charge's usage record carries, in the rollup's column order. */
export const TOKEN_FIELDS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cache_write_1h_tokens'] as const

/**
 * One token count of a usage record as the rollup sums it: a whole non-negative JSON number as
 * it was recorded, anything else (absent, text such as "NaN" in usage marked invalid, a
 * negative or fractional count) 0. Nested CASEs because only CASE fixes the order Postgres
 * evaluates in: the cast runs only on a JSON number. The migration that created the rollup
 * backfills it with the same expression.
 */
export function tokenCount(usageColumn: string, field: (typeof TOKEN_FIELDS)[number]): SQL {
  const value = `(${usageColumn}->>'${field}')::numeric`
  return sql.raw(
    `case when jsonb_typeof(${usageColumn}->'${field}') = 'number' then (case when ${value} >= 0 and ${value} = trunc(${value}) then ${value} else 0 end) else 0 end`,
  )
}

/** The start of the UTC hour `now` falls in: the rollup's time key. */
export function rollupHour(now: Date): Date {
  return new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000)
}

/**
 * `insert into usage_rollups … on conflict do update` over the rows of `source` that `where`
 * selects (a CTE with account_id, key_id, user_sub, model, session_id, usage and the two amounts).
 * Rows go in sorted by their key, so two statements that touch the same rollup rows lock them
 * in the same order and cannot deadlock each other; `after` names CTEs that must be done first
 * (the wallets and key months every billing statement locks before).
 */
export function upsertRollup(options: {
  source: string
  after?: string
  where?: string
  /** The rollup hour as ISO text (rollupHour), or where a fixed statement (db/fixed-statement.ts) puts it. */
  hour: string | Placeholder<string>
  charged: string
  uncollected: string
}): SQL {
  const from = options.after ? `${options.source}, ${options.after}` : options.source
  const tokens = TOKEN_FIELDS.map((field) => sql`sum(${tokenCount('usage', field)})`)
  return sql`
      insert into usage_rollups (hour, account_id, key_id, user_sub, model, session_id, requests, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, cost, uncollected)
      select ${options.hour}::timestamptz, coalesce(account_id, ''), coalesce(key_id, ''), coalesce(user_sub, ''), coalesce(model, ''), coalesce(session_id, ''), count(*),
        ${sql.join(tokens, sql`, `)}, sum(${sql.raw(options.charged)}), sum(${sql.raw(options.uncollected)})
      from ${sql.raw(from)} ${sql.raw(options.where ? `where ${options.where}` : '')}
      group by 2, 3, 4, 5, 6
      order by 2, 3, 4, 5, 6
      on conflict (hour, account_id, key_id, user_sub, model, session_id) do update set
        requests = usage_rollups.requests + excluded.requests,
        input_tokens = usage_rollups.input_tokens + excluded.input_tokens,
        output_tokens = usage_rollups.output_tokens + excluded.output_tokens,
        cache_read_tokens = usage_rollups.cache_read_tokens + excluded.cache_read_tokens,
        cache_write_tokens = usage_rollups.cache_write_tokens + excluded.cache_write_tokens,
        cache_write_1h_tokens = usage_rollups.cache_write_1h_tokens + excluded.cache_write_1h_tokens,
        cost = usage_rollups.cost + excluded.cost,
        uncollected = usage_rollups.uncollected + excluded.uncollected`
}
