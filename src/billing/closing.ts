import type { UsageRecord } from '../canonical/usage'
import { logEvent } from '../observability/log'
import type { Hold } from './hold'
import type { LapsedCharge } from './lapsed-charges'

/** The end of one held call (HoldBook.settle or release), and what it takes from its payer. */
export interface Closing {
  hold: Hold
  /** What the call cost by the provider's usage (0 for a release); may exceed the hold. */
  cost: bigint
  usage: UsageRecord | null
  model: string
  provider: string
  /** An earlier attempt to write it failed, and may have committed with its answer lost. */
  retried?: boolean
}

export interface ClosedHold {
  /** Taken from the payer: the cost, capped at the hold. */
  charged: bigint
  /** Cost beyond the hold, recorded and not taken. */
  uncollected: bigint
  /**
   * A sweep had expired the hold (or its lease) before the closing landed: `charged` came from the
   * payer's available credit instead, and what that could not cover is `uncollected`.
   */
  lapsed?: boolean
}

/** See boundedCost: the largest cost a ledger entry can record (its amounts are 64-bit). */
const MAX_RECORDED_COST = 2n ** 63n - 1n

/** What a closing charges: its cost, and that capped at its hold. */
export function chargeOf(item: Closing): LapsedCharge {
  return {
    payer: item.hold.payer,
    requestId: item.hold.requestId,
    sessionId: item.hold.sessionId ?? null,
    periods: item.hold.periods,
    cost: item.cost,
    charged: closedLocally(item).charged,
    usage: item.usage,
    model: item.model,
    provider: item.provider,
  }
}

/** What a closing takes from the payer: the cost capped at the hold, the rest recorded as uncollected. */
export function closedLocally(closing: Closing): ClosedHold {
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
  const charged = closing.cost < closing.hold.amount ? closing.cost : closing.hold.amount
  return { charged, uncollected: closing.cost - charged }
}

/**
 * Callers price usage they have already checked; this is the last guard before the database:
 * a charge is never negative (the ledger refuses one), and a cost is recorded in full, however
 * far beyond its hold (docs/billing.md#untrusted-usage), unless its uncollected part would not
 * fit the column.
 */
export function boundedCost(closing: Closing): bigint {
  const ceiling = MAX_RECORDED_COST
  if (closing.cost >= 0n && closing.cost <= ceiling) return closing.cost
  logEvent('error', 'a closing cost out of bounds was clamped', { hold_id: closing.hold.id, request_id: closing.hold.requestId })
  return closing.cost < 0n ? 0n : ceiling
}
