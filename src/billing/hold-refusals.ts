import { InsufficientBalanceError, QuotaExceededError, UserQuotaExceededError } from '../errors/kinds'
import { microsToCredits } from './money'
import type { Payer } from './payer'
import { PERIOD_WORDS, PERIODS, type Period, type PeriodKeys, periodEndOfKey } from './periods'

/**
 * The refusals of a hold say what the request needed (its worst case), what was left for it and,
 * for a limit, when the period resets (docs/billing.md#refusals). Every amount in them is the
 * payer's own: the caller's wallet, allotment or limit, never another account's.
 */

/** A refusal for passing a spend limit: the key's, or the user's (docs/billing.md#spend-limits-by-period). */
export type QuotaRefusal = QuotaExceededError | UserQuotaExceededError

/** The refusal of a hold of `needed` when the payer's wallet or allotment has only `available` left. */
export function creditRefusal(needed: bigint, available: bigint): InsufficientBalanceError {
  const left = available < 0n ? 0n : available
  return new InsufficientBalanceError(
    `Not enough credit for this request: its worst case is ${microsToCredits(needed)} credits and ${microsToCredits(left)} are available.`,
  )
}

/** The refusal of a hold of `needed` that would pass the payer's limit in the period `periodKey` of `period`, which `committed` of is already spent or held. */
export function quotaRefusal(payer: Payer, period: Period, periodKey: string, quota: bigint, committed: bigint, needed: bigint): QuotaRefusal {
  const whose = payer.keyId === null ? "the user's" : "the API key's"
  const left = committed > quota ? 0n : quota - committed
  const message =
    `This request would pass ${whose} ${PERIOD_WORDS[period]} of ${microsToCredits(quota)} credits: its worst case is ` +
    `${microsToCredits(needed)} credits and ${microsToCredits(left)} are left (${microsToCredits(committed)} already spent or held). ` +
    `The limit resets at ${periodEndOfKey(period, periodKey).toISOString()}.`
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
    if (spent + amount > quota) return quotaRefusal(payer, period, periods[period], quota, spent, amount)
  }
  return undefined
}
