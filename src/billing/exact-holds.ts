import type { DatabaseHandle } from '../db/client'
import { retryingDeadlocks } from '../db/rows'
import { timedBatch } from '../observability/metrics'
import { takeHoldBatch } from './batched-takes'
import { Batcher } from './batcher'
import { type ClosedHold, type Closing, closedLocally } from './closing'
import { closingOutcomes } from './closing-outcomes'
import type { Hold, HoldRequest } from './hold'
import { closeHoldsAtomically } from './hold-statements'
import type { HoldStrategy } from './hold-strategy'
import { isLeaseableRefusal, type LeaseableRefusal } from './lease-keys'
import type { PendingClosings } from './pending-closings'

/** Tries a request refused for want of credit or quota again, once credit held elsewhere may have come back (`retake` takes it anew). */
export type RefusalRetry = (request: HoldRequest, retake: () => Promise<Hold>, refusal: LeaseableRefusal) => Promise<Hold>

export interface ExactHoldsOptions {
  /** This process, recorded on its holds. */
  instanceId: string
  /** How long a hold outlives its last heartbeat. */
  ttlMs: number
  now: () => number
  /** How long a client waits for its settlement to land before it is answered from the local figures (default 2 s). */
  closingAnswerMs?: number
  /** A refusal stands unless this tries again: credit or quota room that leases keep unused (CreditLeases.retryRefused). */
  retryRefused?: RefusalRetry
}

/** A hold whose closing is pending is still renewed this long, so an outage shorter than this settles it rather than expiring it. */
const PENDING_RENEWAL_MS = 10 * 60_000

/**
 * Exact holds (docs/billing.md#holds): one hold row each, taken before the call and closed after
 * it. Every change is a conditional update under row locks in the database, so no number of
 * processes can take a payer below zero; many calls share one transaction (group commit) to keep
 * a busy wallet fast.
 *
 * Only holds this process knows to be alive are renewed (see sweeper.ts): an open call's hold
 * while the call runs, and a hold whose closing is still being retried for a bounded time. A
 * hold whose take failed halfway (the commit's outcome unknown), or whose closing was given
 * up, is left to expire, so no hold outlives its request by more than the TTL.
 */
export class ExactHolds implements HoldStrategy {
  private readonly takes: Batcher<HoldRequest, Hold>
  private readonly closes: Batcher<Closing, ClosedHold>
  /** Hold id -> renew until (ms): open calls forever, pending closings for a while. */
  private readonly renewing = new Map<string, number>()

  constructor(
    private readonly database: Pick<DatabaseHandle, 'db' | 'rows'>,
    private readonly closings: PendingClosings,
    private readonly options: ExactHoldsOptions,
  ) {
    const taker = () => ({ instanceId: options.instanceId, ttlMs: options.ttlMs, now: new Date(options.now()) })
    this.takes = new Batcher((requests) => timedBatch('hold', requests.length, () => takeHoldBatch(database, taker(), requests)))
    this.closes = new Batcher((items) => timedBatch('settle', items.length, () => this.closeBatch(items)))
  }

  /** Reserves the worst case, or fails with 402 insufficient_balance / 403 api_key_quota_exceeded. */
  async take(request: HoldRequest): Promise<Hold> {
    let hold: Hold
    try {
      hold = await this.takes.submit(request)
    } catch (error) {
      // Credit or quota room that leases keep unused must not refuse a call a lease-less gateway would take.
      const retry = this.options.retryRefused
      if (!(isLeaseableRefusal(error) && retry)) throw error
      hold = await retry(request, () => this.takes.submit(request), error)
    }
    this.renewing.set(hold.id, Number.POSITIVE_INFINITY)
    return hold
  }

  settle(closing: Closing): Promise<ClosedHold> {
    return this.close(closing)
  }

  /** A release is a closing like a settlement: the hold row goes, the whole amount back to the payer. */
  release(closing: Closing): Promise<ClosedHold> {
    return this.close(closing)
  }

  /** Open calls' holds, and pending closings' within their renewal window. */
  liveHoldIds(): string[] {
    const now = this.options.now()
    const ids: string[] = []
    for (const [id, until] of this.renewing) {
      if (until >= now) ids.push(id)
      else this.renewing.delete(id)
    }
    return ids
  }

  /** Holds whose call has not begun closing (settle or release). */
  openHoldCount(): number {
    let open = 0
    for (const until of this.renewing.values()) if (until === Number.POSITIVE_INFINITY) open++
    return open
  }

  /** Nothing to give back: each exact hold went with its closing. */
  async stop(): Promise<void> {}

  /**
   * Never fails: when the database cannot take the closing now, it is retried in the background
   * until it lands, and the caller is answered from the same arithmetic the database will do.
   */
  private async close(closing: Closing): Promise<ClosedHold> {
    const { id } = closing.hold
    this.renewing.set(id, this.options.now() + PENDING_RENEWAL_MS)
    const landing = this.closings.land(closing, this.closes, () => this.renewing.delete(id))
    let timer: ReturnType<typeof setTimeout> | undefined
    const answerBy = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.options.closingAnswerMs ?? 2_000)
    })
    const landed = await Promise.race([landing, answerBy])
    clearTimeout(timer)
    return landed ?? closedLocally(closing)
  }

  private async closeBatch(items: Closing[]): Promise<(ClosedHold | Error)[]> {
    const now = new Date(this.options.now())
    const closedIds = await retryingDeadlocks(() => closeHoldsAtomically(this.database, items, now))
    return closingOutcomes(this.database, items, (item) => closedIds.has(item.hold.id), now)
  }
}
