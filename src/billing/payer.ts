import type { PayerKind } from '../db/schema'
import type { PeriodQuotas } from './periods'

/** Who pays for a call (docs/billing.md#payers), with what the ledger records about them. */
export interface Payer {
  walletId: string
  type: PayerKind
  /** Account id, key id or user id: whose wallet it is. */
  ownerId: string
  accountId: string | null
  keyId: string | null
  userSub: string | null
  env: string | null
  /**
   * Whose spend by period the call counts in (docs/billing.md#spend-limits-by-period): the key's
   * id, or the user's; null for a wallet's credit lease, which counts in nobody's.
   */
  spenderId: string | null
  /** The spender's limits by period in micro-credits (a key's apply whichever wallet pays). */
  quotas: PeriodQuotas
  /** The key's tokens-per-minute limit, when it has one: settled tokens are counted against it. */
  tokensPerMinute: number | null
}
