import type { SQL } from 'drizzle-orm'
import type { Queryable } from './database'

/** Rows of a raw statement; the two drivers wrap them differently. */
export async function queryRows<Row>(db: Queryable, query: SQL): Promise<Row[]> {
  const result: unknown = await db.execute(query)
  return (Array.isArray(result) ? result : (result as { rows: Row[] }).rows) as Row[]
}

/** Runs `work` again when Postgres aborted it to break a deadlock (SQLSTATE 40P01); it was rolled back whole. */
export async function retryingDeadlocks<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= attempts || !isDeadlock(error)) throw error
    }
  }
}

function isDeadlock(error: unknown): boolean {
  for (let current: unknown = error; current; current = (current as { cause?: unknown }).cause) {
    if ((current as { code?: unknown }).code === '40P01') return true
  }
  return false
}
