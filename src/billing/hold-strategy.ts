import type { ClosedHold, Closing } from './closing'
import type { Hold, HoldRequest } from './hold'

/**
 * One way of holding a call's credit (docs/billing.md#hold-settle-release): exactly, one hold
 * in the database each (exact-holds.ts), or drawn in memory from a credit lease
 * (leased-holds.ts). The hold book asks its strategies in turn when a hold is taken, and
 * closes each hold through the one that took it.
 */
export interface HoldStrategy {
  /** Reserves the request's worst case; undefined when this strategy does not take it (the hold book asks the next). */
  take(request: HoldRequest): Promise<Hold | undefined>
  /** Charges the closing's cost (capped at the hold) and releases the rest. Never fails. */
  settle(closing: Closing): Promise<ClosedHold>
  /** Gives the whole hold back: the closing charges nothing and records no usage. Never fails. */
  release(closing: Closing): Promise<ClosedHold>
  /** The database holds of this strategy the heartbeat extends. */
  liveHoldIds(): string[]
  /** Holds it took whose call is still open. */
  openHoldCount(): number
  /** For a stopping process, once every closing has landed: gives back what it still holds (waits at most `timeoutMs`). */
  stop(timeoutMs: number): Promise<void>
}
