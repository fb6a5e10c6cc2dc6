import { lt, sql } from 'drizzle-orm'
import { requestActivity } from '../db/activity-schema'
import type { Database } from '../db/database'
import { describeDatabaseError } from '../db/errors'
import type { ActivityRow } from './activity-row'
import { logEvent } from './log'
import { activityDropped, activityWriteFailures } from './metrics'

export interface ActivityWriterOptions {
  /** Days records are kept (`TOLLGATE_ACTIVITY_RETENTION_DAYS`); 0: nothing is recorded. */
  retentionDays: number
  now: () => number
  /** Records written by one insert at most (default 500). */
  batchSize?: number
  /** How long a record waits for others to share its insert (default 1 s). */
  gatherMs?: number
  /** Records kept waiting at most (default 20,000); past that the oldest are dropped. */
  capacity?: number
  /** The first retry's wait after a failed insert, doubled on each failure after it (default 1 s)… */
  retryBaseMs?: number
  /** …up to this (default 30 s). */
  retryMaxMs?: number
  /** Old records deleted by one statement (default 5,000). */
  retentionBatch?: number
}

const DAY_MS = 24 * 60 * 60 * 1000
/** How often old records are looked for, once a look has deleted them all. */
const RETENTION_EVERY_MS = 60 * 60 * 1000
/** Delete statements one look runs at most: what is left waits for the next write. */
const RETENTION_BATCHES_PER_LOOK = 10
/** While records are being dropped, one warning per this interval says how many. */
const DROP_WARN_INTERVAL_MS = 60_000

/**
 * Writes request activity records (docs/operations.md#request-activity) off the requests' path:
 * `add` only queues, and the queue is written by one multi-row insert when a batch is full or a
 * record has waited `gatherMs`. A request never waits on it, and the ledger never depends on it.
 *
 * An insert the database does not take is retried, the same rows, after a wait that doubles on
 * each failure; records that arrive meanwhile queue up to `capacity`, past which the oldest are
 * dropped (counted in `tollgate_activity_dropped_total`, and warned of once a minute). An insert
 * that reached the database before failing to answer is retried harmlessly: a record's request id
 * is its key, and a second insert of it does nothing. Each process writes its own records (a
 * worker of `serve --workers N` too), and deletes old ones in small batches after its writes.
 */
export class ActivityWriter {
  private readonly queue: BoundedQueue<ActivityRow>
  /** The rows of the insert under way or to retry: out of the queue, written before any newer. */
  private batch: ActivityRow[] = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private writing: Promise<void> | undefined
  private failures = 0
  private retryAt = 0
  private nextRetentionAt = 0
  private droppedSinceWarning = 0
  private lastDropWarning = Number.NEGATIVE_INFINITY
  private stopped = false

  constructor(
    private readonly db: Database,
    private readonly options: ActivityWriterOptions,
  ) {
    this.queue = new BoundedQueue(options.capacity ?? 20_000)
  }

  get enabled(): boolean {
    return this.options.retentionDays > 0
  }

  /** Records waiting to be written (queued, or in an insert to retry). */
  get pending(): number {
    return this.queue.size + this.batch.length
  }

  /** Queues one record; never waits and never throws. */
  add(row: ActivityRow): void {
    if (!this.enabled || this.stopped) return
    if (this.queue.push(row)) this.dropped()
    if (this.queue.size >= this.batchSize && this.retryAt <= this.options.now()) this.writeSoon(0)
    else this.writeSoon(this.options.gatherMs ?? 1000)
  }

  /**
   * Writes everything queued now, batch after batch, and resolves when the queue is empty or an
   * insert failed (the failure is retried later, as usual). Shutdown calls it after the drain.
   */
  async flush(): Promise<void> {
    while (this.pending > 0) {
      await this.write()
      if (this.failures > 0) return
    }
  }

  /** Stops the timer; what is still queued is not written (flush first). */
  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private get batchSize(): number {
    return this.options.batchSize ?? 500
  }

  private writeSoon(delayMs: number): void {
    if (this.stopped || (this.timer !== undefined && delayMs > 0)) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = undefined
      // A failed insert (a flush's, say) set when to try again: not before.
      const backoff = this.retryAt - this.options.now()
      if (backoff > 0) this.writeSoon(backoff)
      else void this.write().then(() => this.afterWrite())
    }, delayMs)
    // The queue never keeps a process alive: shutdown flushes it.
    this.timer.unref?.()
  }

  /** After a write: more queued is written at once, or after the retry's wait. */
  private afterWrite(): void {
    if (this.pending === 0) return
    const now = this.options.now()
    this.writeSoon(this.retryAt > now ? this.retryAt - now : this.queue.size >= this.batchSize ? 0 : (this.options.gatherMs ?? 1000))
  }

  /** One insert at a time: a second caller waits for the one under way. */
  private write(): Promise<void> {
    this.writing ??= this.insertBatch().finally(() => {
      this.writing = undefined
    })
    return this.writing
  }

  private async insertBatch(): Promise<void> {
    if (this.batch.length === 0) this.batch = this.queue.take(this.batchSize)
    if (this.batch.length === 0) return
    try {
      await this.db.insert(requestActivity).values(this.batch).onConflictDoNothing()
      this.batch = []
      if (this.failures > 0) logEvent('info', 'request activity written again after a failure', { failed_attempts: this.failures })
      this.failures = 0
      this.retryAt = 0
    } catch (error) {
      activityWriteFailures.inc({})
      this.failures++
      const wait = Math.min((this.options.retryBaseMs ?? 1000) * 2 ** (this.failures - 1), this.options.retryMaxMs ?? 30_000)
      this.retryAt = this.options.now() + wait
      // The first failure and then one line per doubling's end: an outage logs a few lines, not one per second.
      if (wait < (this.options.retryMaxMs ?? 30_000) || this.failures % 10 === 0) {
        logEvent('warn', 'request activity not written; retrying', { records: this.pending, retry_in_ms: wait, error: describeDatabaseError(error) })
      }
      return
    }
    await this.deleteExpired()
  }

  /**
   * Deletes records older than the retention, a batch per statement and a few statements per
   * look, so a large backlog never holds the writer long. Another instance may delete the same
   * rows at the same time: each skips the rows the other has locked.
   */
  private async deleteExpired(): Promise<void> {
    const now = this.options.now()
    if (now < this.nextRetentionAt) return
    const before = new Date(now - this.options.retentionDays * DAY_MS)
    const batch = this.options.retentionBatch ?? 5000
    try {
      for (let look = 0; look < RETENTION_BATCHES_PER_LOOK; look++) {
        const deleted = await this.db
          .delete(requestActivity)
          .where(
            sql`${requestActivity.requestId} in (${this.db
              .select({ id: requestActivity.requestId })
              .from(requestActivity)
              .where(lt(requestActivity.createdAt, before))
              .limit(batch)
              .for('update', { skipLocked: true })})`,
          )
          .returning({ id: requestActivity.requestId })
        if (deleted.length < batch) {
          this.nextRetentionAt = now + RETENTION_EVERY_MS
          return
        }
      }
    } catch (error) {
      logEvent('warn', 'deleting old request activity failed; the next write tries again', { error: describeDatabaseError(error) })
    }
  }

  private dropped(): void {
    activityDropped.inc({})
    this.droppedSinceWarning++
    const now = this.options.now()
    if (now - this.lastDropWarning < DROP_WARN_INTERVAL_MS) return
    logEvent('warn', 'request activity queue full: the oldest records were dropped unwritten', { dropped: this.droppedSinceWarning })
    this.lastDropWarning = now
    this.droppedSinceWarning = 0
  }
}

/** A first-in, first-out queue of fixed capacity: a push onto a full one drops the oldest (and says so). */
class BoundedQueue<T> {
  private readonly items: (T | undefined)[]
  private head = 0
  size = 0

  constructor(readonly capacity: number) {
    this.items = new Array(capacity)
  }

  /** Adds `item`; true when the oldest had to go to make room. */
  push(item: T): boolean {
    const full = this.size === this.capacity
    this.items[(this.head + this.size) % this.capacity] = item
    if (full) this.head = (this.head + 1) % this.capacity
    else this.size++
    return full
  }

  /** Removes and returns up to `count` of the oldest. */
  take(count: number): T[] {
    const taken: T[] = []
    while (taken.length < count && this.size > 0) {
      const item = this.items[this.head]
      this.items[this.head] = undefined
      this.head = (this.head + 1) % this.capacity
      this.size--
      if (item !== undefined) taken.push(item)
    }
    return taken
  }
}
