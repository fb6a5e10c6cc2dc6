import { describeDatabaseError, isTransientDatabaseError } from '../db/errors'
import { logEvent } from '../observability/log'
import type { Batcher } from './batcher'
import type { ClosedHold, Closing } from './closing'

/** A closing that keeps failing on its own data (not an outage) is given up after this many attempts: the sweep expires its hold. */
const MAX_ATTEMPTS_WITHOUT_OUTAGE = 5

const defaultRetryDelay = (attempt: number) => Math.min(4_000, 250 * 2 ** (attempt - 1))

/**
 * The closings (settlements and releases) of every kind of hold on their way to the database
 * (docs/billing.md#database-outages): each is written through its kind's batcher, retried with
 * backoff until it lands or is given up, and counted pending until then, so a reader or a
 * stopping process can wait for what this process has already answered.
 */
export class PendingClosings {
  /** Closings not yet landed in the database. */
  private readonly pending = new Set<Promise<unknown>>()

  /** `retryDelayMs`: the backoff between attempts of a closing that failed (default 250 ms doubling to 4 s, so it lands soon after an outage ends). */
  constructor(private readonly retryDelayMs: (attempt: number) => number = defaultRetryDelay) {}

  /** Writes a closing through `batcher` in the background; `landed` is told how it ended (undefined: given up). */
  land<C extends Closing>(closing: C, batcher: Batcher<C, ClosedHold>, landed: (closed: ClosedHold | undefined) => void): Promise<ClosedHold | undefined> {
    const landing = this.write(closing, batcher)
      .then((closed) => {
        landed(closed)
        return closed
      })
      .finally(() => this.pending.delete(landing))
    this.pending.add(landing)
    return landing
  }

  get size(): number {
    return this.pending.size
  }

  /**
   * Waits (at most `timeoutMs`) for the closings not yet written when it is called, not for
   * those that come after: what a caller reads next includes every charge this process had
   * answered before (a busy gateway always has charges in flight, so waiting for none would never end).
   */
  async caughtUp(timeoutMs: number): Promise<void> {
    if (this.pending.size === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs)
    })
    await Promise.race([Promise.allSettled([...this.pending]), deadline])
    clearTimeout(timer)
  }

  /** Waits (at most `timeoutMs`) for every closing not yet written; true when none is left. */
  async landPending(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (this.pending.size > 0 && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.pending]), Bun.sleep(Math.max(0, deadline - Date.now()))])
    }
    return this.pending.size === 0
  }

  /** Writes a closing, retrying with backoff until it lands; undefined when it was given up. */
  private async write<C extends Closing>(closing: C, batcher: Batcher<C, ClosedHold>): Promise<ClosedHold | undefined> {
    let failures = 0
    for (let attempt = 1; ; attempt++) {
      try {
        const closed = await batcher.submit(attempt > 1 ? { ...closing, retried: true } : closing)
        if (attempt > 1) logEvent('info', 'hold closing landed after retries', { hold_id: closing.hold.id, attempts: attempt })
        return closed
      } catch (error) {
        const outage = isTransientDatabaseError(error)
        if (!outage) failures++
        if (attempt === 1 || failures >= MAX_ATTEMPTS_WITHOUT_OUTAGE) {
          logEvent(
            failures >= MAX_ATTEMPTS_WITHOUT_OUTAGE ? 'error' : 'warn',
            failures >= MAX_ATTEMPTS_WITHOUT_OUTAGE ? 'hold closing given up; the sweep will expire the hold' : 'hold closing failed; retrying',
            {
              hold_id: closing.hold.id,
              request_id: closing.hold.requestId,
              error: describeDatabaseError(error),
            },
          )
        }
        if (failures >= MAX_ATTEMPTS_WITHOUT_OUTAGE) return undefined
        await Bun.sleep(this.retryDelayMs(attempt))
      }
    }
  }
}
