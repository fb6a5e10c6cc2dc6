import { InsufficientBalanceError, QuotaExceededError, UserQuotaExceededError } from '../errors/kinds'
import type { Payer } from './payer'
import { hasQuota } from './periods'

/** A refusal a lease may have caused: credit or quota room that leases keep unused. */
export type LeaseableRefusal = InsufficientBalanceError | QuotaExceededError | UserQuotaExceededError

export function isLeaseableRefusal(error: unknown): error is LeaseableRefusal {
  return error instanceof InsufficientBalanceError || error instanceof QuotaExceededError || error instanceof UserQuotaExceededError
}

/** The lease a payer's calls draw from: its wallet's, or, for a key or user with a spend limit, its own (its holds count in its spend by period). */
export function leaseKeyOf(payer: Payer): string {
  return hasQuota(payer.quotas) && payer.spenderId !== null ? `${payer.walletId}/${payer.spenderId}` : payer.walletId
}

export function walletOfLeaseKey(key: string): string {
  const slash = key.indexOf('/')
  return slash < 0 ? key : key.slice(0, slash)
}
