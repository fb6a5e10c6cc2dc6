import { logEvent } from '../observability/log'
import { CounterUnavailableError, type HitCounter } from './rate-limit'

/** The primary is on the same machine: one that takes this long is stuck, and requests do not wait for it. */
const DEFAULT_DEADLINE_MS = 250

/** What the counter needs of the worker's channel (lifecycle/worker-link.ts). */
export interface CounterChannel {
  counter(op: 'add' | 'read', name: string, amount: number, ttlMs: number, deadlineMs: number): Promise<number | undefined>
}

/**
 * The rate-limit counts of a worker, kept by the primary so that N workers admit exactly the
 * configured limit, not N times it (docs/operations.md#workers). A primary that does not answer
 * within the deadline is treated as a Redis outage is: the request passes, and the outage is
 * logged once when it begins and once when it ends.
 */
export class IpcHitCounter implements HitCounter {
  private unreachable = false

  constructor(
    private readonly channel: CounterChannel,
    private readonly deadlineMs = DEFAULT_DEADLINE_MS,
    private readonly log: typeof logEvent = logEvent,
  ) {}

  add(name: string, amount: number, ttlMs: number): Promise<number> {
    return this.answer(this.channel.counter('add', name, amount, ttlMs, this.deadlineMs))
  }

  read(name: string): Promise<number> {
    return this.answer(this.channel.counter('read', name, 0, 1, this.deadlineMs))
  }

  close(): void {}

  private async answer(pending: Promise<number | undefined>): Promise<number> {
    const value = await pending
    if (value === undefined) {
      if (!this.unreachable) {
        this.unreachable = true
        this.log('warn', 'rate-limit counter (the primary process) did not answer; requests pass unlimited until it does', { deadline_ms: this.deadlineMs })
      }
      throw new CounterUnavailableError('the primary process did not answer')
    }
    if (this.unreachable) {
      this.unreachable = false
      this.log('info', 'rate-limit counter (the primary process) answers again; limits apply')
    }
    return value
  }
}
