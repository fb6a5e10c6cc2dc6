import type { ApiKeyRow } from '../auth/api-keys'
import type { Queryable } from '../db/client'
import { QuotaExceededError } from '../errors/kinds'
import { keyMonth } from './spend'

/**
 * 403 api_key_quota_exceeded when a key's monthly quota is already reached by its settled
 * charges and open holds. (Taking a hold checks the quota again, atomically, for its amount.)
 */
export async function checkMonthlyQuota(db: Queryable, key: ApiKeyRow, now: number): Promise<void> {
  if (key.monthlyQuota === null) return
  const month = await keyMonth(db, key.id, now)
  if (month.charged + month.held >= key.monthlyQuota) throw new QuotaExceededError("This API key's monthly quota is reached.")
}
