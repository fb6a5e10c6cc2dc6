/**
 * What one upstream call consumed, in provider-neutral units. Billing reads only this; each
 * provider's convert-usage.ts fills it from its own wire format.
 */
export interface Usage {
  /** Input tokens billed at the input price: everything not read from or written to a cache. */
  inputTokens: number
  /** Output tokens, reasoning included. */
  outputTokens: number
  /** Input tokens served from the provider's prompt cache (cacheRead price). */
  cacheReadTokens: number
  /** Input tokens written to the provider's prompt cache for its default lifetime, five minutes (cacheWrite price). */
  cacheWriteTokens: number
  /** Input tokens written to the provider's prompt cache for one hour (cacheWrite1h price); apart from cacheWriteTokens. */
  cacheWrite1hTokens: number
  /** Searches made by a provider-hosted web search tool (webSearch price per call). */
  webSearchRequests: number
}

export const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 }

/** A usage from the counts that were consumed; every other count is 0. A new pricing dimension is added here once. */
export function usageOf(counts: Partial<Usage>): Usage {
  return { ...NO_USAGE, ...counts }
}

/** Every input token of a usage, whatever it was priced at: plain input, cache reads and cache writes of both lifetimes. */
export function allInputTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.cacheWrite1hTokens
}

/** The gateway's own count when the provider reported nothing: the input estimate and the output it counted. */
export function estimatedUsage(inputTokens: number, outputTokens: number): Usage {
  return usageOf({ inputTokens, outputTokens })
}

/** Where the figures came from: the provider's report, or the gateway's own count of what it relayed. */
export type UsageSource = 'provider' | 'estimate'

/**
 * What the ledger keeps of one call's consumption (its `usage` column): counts by name in the
 * unit the call was priced in (tokens, images, characters, seconds), where they came from, and
 * the marks billing adds (invalid or anomalous usage, with the reason). A count is the
 * upstream's as it came, so the values are free-form until billing has checked them
 * (billing/usage-guard.ts turns what pricing refused into storable text).
 */
export type UsageRecord = Record<string, unknown>

/**
 * An upstream's count as it goes into the canonical usage: absent is 0, a number stays as it
 * is (billing checks it: usage-guard.ts), and anything else (a numeric string, an object)
 * becomes NaN so that no arithmetic in a converter can turn it into a count that looks valid.
 */
export function reportedCount(value: unknown): number {
  if (value === undefined || value === null) return 0
  return typeof value === 'number' ? value : Number.NaN
}
