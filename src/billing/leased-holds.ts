import type { DatabaseHandle } from '../db/client'
import { retryingDeadlocks } from '../db/rows'
import { timedBatch } from '../observability/metrics'
import { newId } from '../util/ids'
import { Batcher } from './batcher'
import { type ClosedHold, type Closing, chargeOf, closedLocally } from './closing'
import { closingOutcomes } from './closing-outcomes'
import type { CreditLeases } from './credit-lease'
import type { RefusalRetry } from './exact-holds'
import type { Hold, HoldRequest } from './hold'
import type { HoldStrategy } from './hold-strategy'
import type { Lease } from './lease'
import { chargeLeasesAtomically } from './lease-statements'
import type { PendingClosings } from './pending-closings'
import { periodKeys } from './periods'

export interface LeasedHoldsOptions {
  now: () => number
  /**
   * How long a charge waits for others before they are written together (default 0). Nobody
   * waits on those writes; on a database that runs one statement at a time it is what keeps one
   * statement per call from being the whole cost.
   */
  chargeGatherMs?: number
}

/** The closing of a hold drawn from a lease, with that lease. */
interface LeasedClosing extends Closing {
  lease: Lease
}

/**
 * Holds drawn in memory from credit leases (docs/billing.md#credit-lease): the hold book's first
 * choice when leases are on. A call the leases cannot serve is left to an exact hold. A draw that
 * is released never reached the database: it goes back to its lease. A charge is answered at
 * once and lands a few milliseconds later, batched with others, out of its lease.
 */
export class LeasedHolds implements HoldStrategy {
  /** Draw (hold id) -> its lease, until its charge has landed or it went back. */
  private readonly draws = new Map<string, Lease>()
  /** Charges of holds drawn from leases: a batcher of their own, so a failure of one kind never rewrites the other. */
  private readonly charges: Batcher<LeasedClosing, ClosedHold>

  /** Before a call is refused for want of credit or quota, leases give back what they keep unused (CreditLeases.retryRefused). */
  readonly retryRefused: RefusalRetry = (request, retake, refusal) => this.leases.retryRefused(request, retake, refusal)

  constructor(
    private readonly database: Pick<DatabaseHandle, 'rows'>,
    private readonly leases: CreditLeases,
    private readonly closings: PendingClosings,
    private readonly options: LeasedHoldsOptions,
  ) {
    this.charges = new Batcher((items) => timedBatch('settle', items.length, () => this.chargeBatch(items)), undefined, undefined, options.chargeGatherMs)
  }

  /** A hold drawn from a lease on the payer's wallet (a quota key's own lease), or undefined: the call is then held exactly. */
  async take(request: HoldRequest): Promise<Hold | undefined> {
    const lease = await this.leases.draw(request)
    if (!lease) return undefined
    const hold: Hold = { ...request, id: newId('hold'), periods: periodKeys(new Date(this.options.now())) }
    this.draws.set(hold.id, lease)
    return hold
  }

  /**
   * Answered at once, from the arithmetic the database will do; the charge lands batched with
   * others a few milliseconds later: no commit on the call's path. What a crash can lose this way
   * is bounded by the lease (docs/billing.md#credit-lease).
   */
  async settle(closing: Closing): Promise<ClosedHold> {
    const lease = this.leaseOf(closing.hold)
    // A drawn hold has no row of its own to renew: its lease is renewed while it has draws.
    void this.closings.land({ ...closing, lease }, this.charges, (closed) =>
      this.finished(closing.hold, closed?.charged ?? 0n, closed !== undefined && !closed.lapsed),
    )
    return closedLocally(closing)
  }

  /** Back to its lease, without touching the database. */
  async release(closing: Closing): Promise<ClosedHold> {
    this.finished(closing.hold, 0n, true)
    return { charged: 0n, uncollected: 0n }
  }

  /** Every lease this process holds: the heartbeat keeps them alive. */
  liveHoldIds(): string[] {
    return this.leases.liveLeaseIds()
  }

  /** Calls holding credit drawn from a lease now. */
  openHoldCount(): number {
    return this.draws.size
  }

  stop(timeoutMs: number): Promise<void> {
    return this.leases.stop(timeoutMs)
  }

  private leaseOf(hold: Hold): Lease {
    const lease = this.draws.get(hold.id)
    if (!lease) throw new Error(`hold ${hold.id} was not drawn from a credit lease of this process`)
    return lease
  }

  /** A draw's call ended: `charged` of it was taken from its lease (0n for a release), `landed` when that reached the database. */
  private finished(hold: Hold, charged: bigint, landed: boolean): void {
    const lease = this.draws.get(hold.id)
    if (!lease) return
    this.draws.delete(hold.id)
    this.leases.finished(lease, hold.amount, charged, landed)
  }

  /** Charges calls drawn from leases; a call whose lease had expired meanwhile is charged as a lapsed hold. */
  private async chargeBatch(items: LeasedClosing[]): Promise<(ClosedHold | Error)[]> {
    const now = new Date(this.options.now())
    const charges = items.map((item) => ({ ...chargeOf(item), leaseId: item.lease.id, retried: item.retried === true }))
    const charged = await retryingDeadlocks(() => chargeLeasesAtomically(this.database, charges, now))
    return closingOutcomes(this.database, items, (item) => charged.has(item.lease.id), now)
  }
}
