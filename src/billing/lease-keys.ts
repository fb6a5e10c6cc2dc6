import { InsufficientBalanceError, QuotaExceededError } from '../errors/kinds'
import type { Payer } from './payer'

/** A refusal a lease may have caused: credit or quota room that leases keep unused. */
export type LeaseableRefusal = InsufficientBalanceError | QuotaExceededError

export function isLeaseableRefusal(error: unknown): error is LeaseableRefusal {
  return error instanceof InsufficientBalanceError || error instanceof QuotaExceededError
}

/** The lease a payer's calls draw from: its wallet's, or a key with a monthly quota's own (its holds count against its month). */
export function leaseKeyOf(payer: Payer): string {
  return payer.monthlyQuota !== null && payer.keyId !== null ? `${payer.walletId}/${payer.keyId}` : payer.walletId
}

export function walletOfLeaseKey(key: string): string {
  const slash = key.indexOf('/')
  return slash < 0 ? key : key.slice(0, slash)
}
