import type { UsageRecord } from '../canonical/usage'
import type { DatabaseHandle } from '../db/client'
import { InvalidRequestError } from '../errors/kinds'
import { boundedCost, type ClosedHold, type Closing } from './closing'
import type { CreditLeases } from './credit-lease'
import { ExactHolds } from './exact-holds'
import type { Hold, HoldRequest } from './hold'
import type { HoldStrategy } from './hold-strategy'
import { LeasedHolds } from './leased-holds'
import { MAX_HOLD_MICROS } from './money'
import { PendingClosings } from './pending-closings'

export interface HoldBookOptions {
  /** This process, recorded on its holds. */
  instanceId: string
  /** How long a hold outlives its last heartbeat. */
  ttlMs: number
  now: () => number
  /** How long a client waits for its settlement to land before it is answered from the local figures (default 2 s). */
  closingAnswerMs?: number
  /** Backoff between attempts of a closing that failed (default 250 ms doubling to 4 s, so it lands soon after an outage ends). */
  retryDelayMs?: (attempt: number) => number
  /** When set, calls draw their holds from credit leases (credit-lease.ts). */
  leases?: CreditLeases
  /**
   * How long a charge drawn from a lease waits for others before they are written together
   * (default 0). Nobody waits on those writes; on a database that runs one statement at a time
   * it is what keeps one statement per call from being the whole cost.
   */
  leaseChargeGatherMs?: number
}

/**
 * Holds before a call, settlement or release after it (docs/billing.md#hold-settle-release). Each
 * hold is taken by one strategy (hold-strategy.ts), chosen when it is taken: drawn from a credit
 * lease when leases are on and one can serve it (leased-holds.ts), else exactly
 * (exact-holds.ts); it is closed through the same one. Closings of both kinds land in the
 * background when the database cannot take them at once (pending-closings.ts).
 */
export class HoldBook {
  private readonly closings: PendingClosings
  private readonly exact: ExactHolds
  /** Asked first, in order, each free to decline (a draw from a credit lease); the exact hold takes what they do not. */
  private readonly preferred: HoldStrategy[]
  /** Hold id -> the strategy that took it, until its closing begins. */
  private readonly takenBy = new Map<string, HoldStrategy>()

  constructor(database: Pick<DatabaseHandle, 'db' | 'rows'>, options: HoldBookOptions) {
    this.closings = new PendingClosings(options.retryDelayMs)
    const { instanceId, ttlMs, now, closingAnswerMs, leases } = options
    const leased = leases && new LeasedHolds(database, leases, this.closings, { now, chargeGatherMs: options.leaseChargeGatherMs })
    this.exact = new ExactHolds(database, this.closings, { instanceId, ttlMs, now, closingAnswerMs, retryRefused: leased?.retryRefused })
    this.preferred = leased ? [leased] : []
  }

  /** Reserves the worst case, or fails with 402 insufficient_balance / 403 api_key_quota_exceeded. */
  async take(request: HoldRequest): Promise<Hold> {
    if (request.amount < 0n || request.amount > MAX_HOLD_MICROS) {
      throw new InvalidRequestError(
        `The worst case of this request exceeds the largest amount the gateway reserves for one call (${MAX_HOLD_MICROS / 1_000_000n} credits).`,
      )
    }
    for (const strategy of this.preferred) {
      const hold = await strategy.take(request)
      if (hold) return this.takenWith(hold, strategy)
    }
    return this.takenWith(await this.exact.take(request), this.exact)
  }

  /**
   * Charges `cost` (capped at the hold) and releases the rest. Never fails: when the database
   * cannot take the closing now, it is retried in the background until it lands, and the
   * caller is answered from the same arithmetic the database will do.
   */
  settle(hold: Hold, cost: bigint, usage: UsageRecord | null, model = hold.model, provider = hold.provider): Promise<ClosedHold> {
    return this.close({ hold, cost, usage, model, provider })
  }

  release(hold: Hold): Promise<ClosedHold> {
    return this.close({ hold, cost: 0n, usage: null, model: hold.model, provider: hold.provider })
  }

  /** The holds the heartbeat extends: credit leases, open calls, and pending closings within their renewal window. */
  liveHoldIds(): string[] {
    return this.strategies().flatMap((strategy) => strategy.liveHoldIds())
  }

  /** Holds taken by this process whose call has not begun closing (settle or release): the calls open now. */
  openHoldCount(): number {
    return this.strategies().reduce((open, strategy) => open + strategy.openHoldCount(), 0)
  }

  /** Closings (settlements and releases) not yet written to the database. */
  pendingClosingCount(): number {
    return this.closings.size
  }

  /**
   * Waits (at most `timeoutMs`) for the closings not yet written when it is called, not for
   * those that come after: what a caller reads next includes every charge this process had
   * answered before (a busy gateway always has charges in flight, so waiting for none would never end).
   */
  caughtUp(timeoutMs: number): Promise<void> {
    return this.closings.caughtUp(timeoutMs)
  }

  /** Waits (at most `timeoutMs`) for every closing not yet written; true when none is left. */
  landPending(timeoutMs: number): Promise<boolean> {
    return this.closings.landPending(timeoutMs)
  }

  /** For a stopping process: lets every closing land (at most `timeoutMs`), then gives back what the strategies hold (credit leases). */
  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    const landed = await this.landPending(timeoutMs)
    for (const strategy of this.strategies()) await strategy.stop(Math.max(0, deadline - Date.now()))
    return landed
  }

  private takenWith(hold: Hold, strategy: HoldStrategy): Hold {
    this.takenBy.set(hold.id, strategy)
    return hold
  }

  /** A closing that charges nothing and records no usage is a release. */
  private close(requested: Closing): Promise<ClosedHold> {
    const closing = { ...requested, cost: boundedCost(requested) }
    const strategy = this.takenBy.get(closing.hold.id) ?? this.exact
    this.takenBy.delete(closing.hold.id)
    return closing.cost === 0n && closing.usage === null ? strategy.release(closing) : strategy.settle(closing)
  }

  private strategies(): HoldStrategy[] {
    return [...this.preferred, this.exact]
  }
}
