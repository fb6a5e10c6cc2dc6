import type { Usage, UsageRecord } from '../canonical/usage'

/**
 * Usage reported by an upstream is untrusted input: a count must be a
 * non-negative whole number a double holds exactly, and a duration a non-negative finite
 * number of plausible length. Pricing refuses anything else with UntrustedUsageError, and the
 * call is then charged its full hold with its usage marked invalid (BilledCall). Usage that is
 * well formed is priced however large: it is the upstream's bill to the operator. Where it is
 * implausible it is also marked anomalous (usageAnomalies), docs/billing.md#untrusted-usage.
 */
export class UntrustedUsageError extends Error {
  constructor(readonly field: string) {
    super(`upstream usage field ${field} is not a plausible count`)
  }
}

/** No single clip or recording is billed beyond a day: a longer reported duration is a fault. */
const MAX_PLAUSIBLE_SECONDS = 86_400

/** A count from an upstream (tokens, images, searches), or UntrustedUsageError. */
export function trustedCount(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new UntrustedUsageError(field)
  return value
}

/** A duration in seconds from an upstream, or UntrustedUsageError. */
export function trustedSeconds(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_PLAUSIBLE_SECONDS) throw new UntrustedUsageError(field)
  return value
}

/** Every field of a canonical usage checked; throws on the first bad one. */
export function trustedUsage(usage: Usage): Usage {
  return {
    inputTokens: trustedCount(usage.inputTokens, 'input_tokens'),
    outputTokens: trustedCount(usage.outputTokens, 'output_tokens'),
    cacheReadTokens: trustedCount(usage.cacheReadTokens, 'cache_read_tokens'),
    cacheWriteTokens: trustedCount(usage.cacheWriteTokens, 'cache_write_tokens'),
    cacheWrite1hTokens: trustedCount(usage.cacheWrite1hTokens, 'cache_write_1h_tokens'),
    webSearchRequests: trustedCount(usage.webSearchRequests, 'web_search_requests'),
  }
}

/**
 * A usage record safe to store whatever the upstream sent: numbers as they are when finite,
 * anything else as short text (NaN, strings, objects), so the ledger shows what was reported.
 */
export function recordableUsage(usage: UsageRecord): UsageRecord {
  const record: UsageRecord = {}
  for (const [field, value] of Object.entries(usage)) {
    record[field] =
      typeof value === 'number' && Number.isFinite(value) ? value : typeof value === 'string' || typeof value === 'boolean' ? value : String(value).slice(0, 64)
  }
  return record
}

/** Why a priced usage is implausible: the `reason` label of tollgate_usage_anomalies_total. */
export type UsageAnomalyReason = 'output_over_limit' | 'price_over_hold'

export interface UsageAnomaly {
  reason: UsageAnomalyReason
  /** The figures behind it, for the ledger and the log. */
  detail: string
}

/**
 * A provider's honest usage stays within the worst case the hold was sized for, give or take
 * the estimator's margin: a price beyond this many holds is implausible.
 */
const PLAUSIBLE_OVERRUN = 4n

/** What a priced call is checked against. */
export interface PricedUsage {
  /** The price of the usage, in micro-credits. */
  cost: bigint
  /** The call's hold, in micro-credits. */
  hold: bigint
  /** Output tokens the provider reported, with the most the upstream was asked for; absent when the usage is not the provider's token count. */
  output?: { tokens: number; limit: number }
}

/** The ways a priced usage is implausible; empty for a plausible one. */
export function usageAnomalies({ cost, hold, output }: PricedUsage): UsageAnomaly[] {
  const anomalies: UsageAnomaly[] = []
  if (output && output.tokens > output.limit) {
    anomalies.push({ reason: 'output_over_limit', detail: `${output.tokens} output tokens reported, ${output.limit} asked of the upstream` })
  }
  if (cost > hold * PLAUSIBLE_OVERRUN) {
    anomalies.push({ reason: 'price_over_hold', detail: `priced ${cost} micro-credits, more than ${PLAUSIBLE_OVERRUN} times the hold of ${hold}` })
  }
  return anomalies
}
