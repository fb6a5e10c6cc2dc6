import type { PayerKind } from '../db/schema'

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
  /** The key's monthly quota in micro-credits; it applies whichever wallet pays. */
  monthlyQuota: bigint | null
  /** The key's tokens-per-minute limit, when it has one: settled tokens are counted against it. */
  tokensPerMinute: number | null
}
