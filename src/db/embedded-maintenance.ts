import { sql } from 'drizzle-orm'
import { logEvent } from '../observability/log'
import type { Database } from './database'
import { describeDatabaseError } from './errors'

/**
 * The tables whose rows are updated or deleted as the gateway runs (holds closed, wallets and
 * spend rows updated, idempotent calls, deliveries and activity past their retention): the
 * ones whose dead rows only a VACUUM makes room for again. The ledger and usage rollups only
 * grow, and are left alone.
 */
export const CHURNING_TABLES = [
  'holds',
  'wallets',
  'key_spend',
  'idempotent_calls',
  'webhook_deliveries',
  'balance_alerts',
  'quota_alerts',
  'request_activity',
] as const

/** How often the tables are vacuumed: a few minutes of dead rows is a few hundred kilobytes at full load. */
export const MAINTENANCE_INTERVAL_MS = 5 * 60_000

/**
 * The embedded database runs no autovacuum (it has no background processes): without this, a
 * closed hold's row, a deleted activity record or an old version of a wallet row keeps its
 * space for good, and the data directory grows with every call even where the live rows do not
 * (with exact holds, about 270 kB of dead holds per thousand calls). Every few minutes each
 * table that churns is vacuumed and analysed, one statement per table, so the billing
 * statements queued meanwhile wait for one small table's vacuum at most, never for all of them.
 * A Postgres server runs its own autovacuum (docs/operations.md#postgres).
 */
export class EmbeddedMaintenance {
  private timer: ReturnType<typeof setInterval> | undefined
  private running: Promise<void> | undefined

  constructor(
    private readonly db: Database,
    private readonly intervalMs = MAINTENANCE_INTERVAL_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.run(), this.intervalMs)
    this.timer.unref?.()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** One pass over every churning table; a pass under way is joined, not doubled. */
  run(): Promise<void> {
    this.running ??= this.vacuumEach().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  private async vacuumEach(): Promise<void> {
    for (const table of CHURNING_TABLES) {
      try {
        await this.db.execute(sql.raw(`vacuum (analyze) ${table}`))
      } catch (error) {
        logEvent('warn', 'vacuuming the embedded database failed; the next pass tries again', { table, error: describeDatabaseError(error) })
      }
    }
  }
}
