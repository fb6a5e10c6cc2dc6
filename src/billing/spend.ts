import { and, eq } from 'drizzle-orm'
import type { Queryable } from '../db/database'
import { keySpend } from '../db/schema'
import { monthKey } from './hold-rows'

/** A key's spend in the calendar month (UTC) that `now` falls in, in micro-credits. */
export async function keyMonth(db: Queryable, keyId: string, now: number): Promise<{ charged: bigint; held: bigint }> {
  const [row] = await db
    .select({ charged: keySpend.charged, held: keySpend.held })
    .from(keySpend)
    .where(and(eq(keySpend.keyId, keyId), eq(keySpend.month, monthKey(new Date(now)))))
  return row ?? { charged: 0n, held: 0n }
}
