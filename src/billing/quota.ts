import { and, eq, sql } from 'drizzle-orm'
import type { ApiKeyRow } from '../auth/api-keys'
import type { Queryable } from '../db/client'
import { holds } from '../db/schema'
import { QuotaExceededError } from '../errors/kinds'
import { monthSpent } from './spend'

/** Micro-credits a key has committed this month: settled charges plus its open holds. */
export async function monthCommitted(db: Queryable, keyId: string, now: number): Promise<bigint> {
  const [spent, [open]] = await Promise.all([
    monthSpent(db, keyId, now),
    db
      .select({ total: sql<string>`coalesce(sum(${holds.amount}), 0)::text` })
      .from(holds)
      .where(and(eq(holds.keyId, keyId), eq(holds.status, 'open'))),
  ])
  return spent + BigInt(open?.total ?? '0')
}

/**
 * 403 api_key_quota_exceeded when a key's monthly quota (calendar month, UTC) cannot take
 * `additional` more micro-credits. With nothing additional: when the quota is reached.
 */
export async function checkMonthlyQuota(db: Queryable, key: ApiKeyRow, now: number, additional = 0n): Promise<void> {
  if (key.monthlyQuota === null) return
  const committed = await monthCommitted(db, key.id, now)
  const exceeded = additional === 0n ? committed >= key.monthlyQuota : committed + additional > key.monthlyQuota
  if (exceeded) throw new QuotaExceededError("This API key's monthly quota is reached.")
}
