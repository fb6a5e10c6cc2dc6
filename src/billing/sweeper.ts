import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from '../db/client'
import { describeDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { logEvent } from '../observability/log'
import { expireHoldsPage } from './sweep-statements'

export interface SweeperOptions {
  ttlMs: number
  intervalMs: number
  now: () => number
  /** The holds this process knows to be alive (HoldBook.liveHoldIds): only these are renewed. */
  liveHoldIds: () => string[]
  /** Holds expired per statement (default 1000): each page is one short transaction. */
  pageSize?: number
}

/**
 * Keeps this process's live holds from expiring and gives back everyone else's stale ones
 * (docs/billing.md#the-sweep): every tick extends the expiry of the holds this process's calls still
 * need, then expires any hold whose expiry has passed: a crashed process's, or one whose
 * request ended without closing it.
 */
export class HoldSweeper {
  private timer: ReturnType<typeof setInterval> | undefined
  private running = false

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
    try {
      await this.heartbeat()
      await this.expire()
    } catch (error) {
      logEvent('error', 'hold sweep failed', { error: describeDatabaseError(error) })
    } finally {
      this.running = false
    }
  }

  async heartbeat(): Promise<void> {
    const ids = this.options.liveHoldIds()
    if (ids.length === 0) return
    const expiresAt = new Date(this.options.now() + this.options.ttlMs).toISOString()
    await this.database.rows(sql`
      update holds set expires_at = ${expiresAt}::timestamptz
      where id in (select jsonb_array_elements_text(${JSON.stringify(ids)}::text::jsonb))`)
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
