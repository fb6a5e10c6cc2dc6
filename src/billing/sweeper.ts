import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from '../db/client'
import { describeDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { logEvent } from '../observability/log'
import { keptPeriodKeys } from './periods'
import { deletePastSpend, expireHoldsPage } from './sweep-statements'

export interface SweeperOptions {
  ttlMs: number
  intervalMs: number
  now: () => number
  /** The holds this process knows to be alive (HoldBook.liveHoldIds): only these are renewed. */
  liveHoldIds: () => string[]
  /** Told after each heartbeat which of the holds asked for it found and renewed, and until when (CreditLeases.confirmRenewal). */
  renewed?: (asked: string[], renewed: Set<string>, expiresAt: number) => void
  /** Holds expired per statement (default 1000): each page is one short transaction. */
  pageSize?: number
}

/** Spend rows of past periods are looked for at most this often: a scan of the spend table, which has a few rows per key and user in use. */
const SPEND_DELETE_INTERVAL_MS = 60_000

/**
 * Keeps this process's live holds from expiring and gives back everyone else's stale ones
 * (docs/billing.md#the-sweep): every tick extends the expiry of the holds this process's calls still
 * need, then expires any hold whose expiry has passed: a crashed process's, or one whose
 * request ended without closing it.
 *
 * After this process could not reach the database (a tick failed, or its heartbeat took longer
 * than a tick), it expires nothing for one TTL: the other instances were most likely cut off as
 * well, and their holds' expiries passed only because they could not renew them. Each gets a
 * whole TTL of reachable database to renew its holds, as it has in normal operation; a crashed
 * instance's holds expire after that.
 */
export class HoldSweeper {
  private timer: ReturnType<typeof setInterval> | undefined
  private running = false
  /** The last tick failed: the database was out of reach. */
  private unreachable = false
  /** No hold is expired before this time (ms): set one TTL after the database is reached again. */
  private expireFrom = Number.NEGATIVE_INFINITY
  /** When spend rows of past periods were last deleted (ms). */
  private spendDeletedAt = Number.NEGATIVE_INFINITY

  constructor(
    private readonly database: Pick<DatabaseHandle, 'rows'>,
    private readonly options: SweeperOptions,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.options.intervalMs)
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** One heartbeat and one sweep; a failure is logged in one short line and the next tick tries again. */
  async tick(): Promise<void> {
    if (this.running) return
    this.running = true
    const started = this.options.now()
    try {
      // With no hold to renew, the heartbeat does not reach the database: only a probe tells the outage is over.
      if (!(await this.heartbeat()) && this.unreachable) await this.database.rows(sql`select 1`)
      const now = this.options.now()
      if (this.unreachable || now - started > this.options.intervalMs) {
        this.expireFrom = now + this.options.ttlMs
        logEvent('info', 'database reachable again: holds expire once their owners had a hold TTL to renew them', {
          expire_from: new Date(this.expireFrom).toISOString(),
        })
      }
      this.unreachable = false
      if (now >= this.expireFrom) await this.expire()
      if (now - this.spendDeletedAt >= SPEND_DELETE_INTERVAL_MS) await this.deletePastSpend()
    } catch (error) {
      this.unreachable = true
      logEvent('error', 'hold sweep failed', { error: describeDatabaseError(error) })
    } finally {
      this.running = false
    }
  }

  /** Renews this process's live holds; false when it had none (and so did not reach the database). */
  async heartbeat(): Promise<boolean> {
    const ids = this.options.liveHoldIds()
    if (ids.length === 0) return false
    const expiresAt = this.options.now() + this.options.ttlMs
    const renewed = await this.database.rows<{ id: string }>(sql`
      update holds set expires_at = ${new Date(expiresAt).toISOString()}::timestamptz
      where id in (select jsonb_array_elements_text(${JSON.stringify(ids)}::text::jsonb))
      returning id`)
    this.options.renewed?.(ids, new Set(renewed.map((row) => row.id)), expiresAt)
    return true
  }

  /** Deletes the spend rows of past periods nothing open counts in any more (docs/billing.md#spend-limits-by-period); returns how many went. */
  async deletePastSpend(): Promise<number> {
    const now = this.options.now()
    const deleted = await retryingDeadlocks(() => deletePastSpend(this.database, keptPeriodKeys(new Date(now))))
    this.spendDeletedAt = now
    return deleted
  }

  /**
   * Expires stale holds page by page until none is left, and returns how many; with
   * `everyOpenHold`, all open holds (an embedded database has no other process). Each page
   * commits on its own: a failure stops this sweep, keeps what earlier pages did, and the next
   * sweep goes on from there.
   */
  async expire(options: { everyOpenHold?: boolean } = {}): Promise<number> {
    const pageSize = this.options.pageSize ?? 1000
    const now = new Date(this.options.now())
    let total = 0
    for (;;) {
      const expired = await retryingDeadlocks(() => expireHoldsPage(this.database, { now, everyOpenHold: options.everyOpenHold ?? false, pageSize }))
      total += expired
      if (expired < pageSize) return total
    }
  }
}
