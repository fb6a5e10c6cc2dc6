import type { Payer } from './payer'
import type { PeriodKeys } from './periods'

/** What a call asks the hold book to reserve before its upstream call: its worst case, on its payer. */
export interface HoldRequest {
  payer: Payer
  /** Micro-credits: the worst case of the call. */
  amount: bigint
  requestId: string
  /** The client's session the call belongs to (docs/billing.md#attribution); absent or null without one. */
  sessionId?: string | null
  model: string
  /** The provider the call was sent to first (a route's `provider`); stored in the `route` column. */
  provider: string
}

/** A reservation the hold book made (exactly, or drawn from a credit lease), closed once by a settlement or a release. */
export interface Hold extends HoldRequest {
  id: string
  /** The periods it was taken in: its spend, and its charge, count in these (docs/billing.md#spend-limits-by-period). */
  periods: PeriodKeys
}
