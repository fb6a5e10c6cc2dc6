import { QuotaExceededError, UserQuotaExceededError } from '../errors/kinds'
import { microsToCredits } from './money'
import type { Payer } from './payer'
import { PERIOD_WORDS, PERIODS, type Period, type PeriodKeys } from './periods'

/** A refusal for passing a spend limit: the key's, or the user's (docs/billing.md#spend-limits-by-period). */
export type QuotaRefusal = QuotaExceededError | UserQuotaExceededError

/** The refusal of a hold that would pass the payer's limit in `period`, which `committed` of is already spent or held. */
export function quotaRefusal(payer: Payer, period: Period, quota: bigint, committed: bigint): QuotaRefusal {
  const whose = payer.keyId === null ? "the user's" : "the API key's"
  const message = `This request would pass ${whose} ${PERIOD_WORDS[period]}: ${microsToCredits(quota)} credits, of which ${microsToCredits(committed)} are already spent or held.`
  return payer.keyId === null ? new UserQuotaExceededError(message) : new QuotaExceededError(message)
}

/**
 * The first limit a hold of `amount` would pass, given what the payer's spend rows of the
 * hold's periods have committed (by period key); undefined when it passes none.
 */
export function passedQuota(payer: Payer, periods: PeriodKeys, amount: bigint, committed: (periodKey: string) => bigint): QuotaRefusal | undefined {
  for (const period of PERIODS) {
    const quota = payer.quotas[period]
    if (quota === null) continue
    const spent = committed(periods[period])
    if (spent + amount > quota) return quotaRefusal(payer, period, quota, spent)
  }
  return undefined
}
