import { type Usage, usageOf } from '../canonical/usage'
import { InvalidRequestError } from '../errors/kinds'
import { creditsToMicros } from './money'
import type { Pricing } from './price-schema'
import { trustedCount, trustedSeconds, trustedUsage, UntrustedUsageError } from './usage-guard'

/**
 * Prices are credits per unit (per million tokens, per call, ...). A charge is the exact sum
 * of its parts, rounded up once to a whole micro-credit (docs/billing.md#prices-and-rounding). Every count is
 * checked first (usage-guard.ts): a negative, fractional or non-numeric count from an
 * upstream is an UntrustedUsageError, never a negative charge or a RangeError.
 */

const TOKENS_PER_PRICE_UNIT = 1_000_000n

/** A config price as micro-credits per unit; prices carry at most six decimals (checked at start). */
function priceMicros(price: number | undefined): bigint {
  if (!price) return 0n
  const micros = creditsToMicros(price)
  if (micros === undefined) throw new Error(`price ${price} has more than six decimals`)
  return micros
}

/** ceil(numerator / denominator) for non-negative bigints. */
function divideUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator
}

/** Micro-credits for token usage: each token count times its per-million price. */
export function chargeForUsage(pricing: Pricing, reported: Usage): bigint {
  const usage = trustedUsage(reported)
  const input = priceMicros(pricing.input)
  // A cache price the model lacks falls back to the plain input price.
  const cacheRead = pricing.cacheRead === undefined ? input : priceMicros(pricing.cacheRead)
  const cacheWrite = pricing.cacheWrite === undefined ? input : priceMicros(pricing.cacheWrite)
  // One-hour writes reach an upstream only for a model that prices them (price-options.ts); any
  // reported without that price are billed as the default lifetime's.
  const cacheWrite1h = pricing.cacheWrite1h === undefined ? cacheWrite : priceMicros(pricing.cacheWrite1h)
  const tokenMicros =
    BigInt(usage.inputTokens) * input +
    BigInt(usage.cacheReadTokens) * cacheRead +
    BigInt(usage.cacheWriteTokens) * cacheWrite +
    BigInt(usage.cacheWrite1hTokens) * cacheWrite1h +
    BigInt(usage.outputTokens) * priceMicros(pricing.output)
  return divideUp(tokenMicros, TOKENS_PER_PRICE_UNIT) + BigInt(usage.webSearchRequests) * priceMicros(pricing.webSearch)
}

/**
 * The worst case a hold must cover: every input token at the dearest input price (writing a
 * cache, for five minutes or an hour, can cost more than plain input), every allowed output token used, every search made.
 */
export function worstCaseForTokens(pricing: Pricing, inputTokens: number, maxOutputTokens: number, webSearches = 0): bigint {
  const dearestInput = Math.max(pricing.input ?? 0, pricing.cacheRead ?? 0, pricing.cacheWrite ?? 0, pricing.cacheWrite1h ?? 0)
  try {
    return chargeForUsage({ ...pricing, input: dearestInput }, usageOf({ inputTokens, outputTokens: maxOutputTokens, webSearchRequests: webSearches }))
  } catch (error) {
    // The request's own limits are checked at the edge; this is the backstop, still the client's fault.
    if (error instanceof UntrustedUsageError) throw new InvalidRequestError('The limits of this request are not whole numbers in range.')
    throw error
  }
}

/** Micro-credits for `count` units at a per-unit price (an image, a search): exact. */
export function chargePerUnit(price: number | undefined, count: number): bigint {
  return BigInt(trustedCount(count, 'count')) * priceMicros(price)
}

/** Micro-credits for `count` at a per-million price (tokens, characters), rounded up. */
export function chargePerMillion(price: number | undefined, count: number): bigint {
  return divideUp(BigInt(trustedCount(count, 'count')) * priceMicros(price), TOKENS_PER_PRICE_UNIT)
}

/** Micro-credits for `seconds` of audio or video at a per-minute price, rounded up. */
export function chargePerMinute(price: number | undefined, seconds: number): bigint {
  // Milliseconds keep fractional durations exact enough: 60,000 ms to the minute.
  return divideUp(BigInt(Math.ceil(trustedSeconds(seconds, 'seconds') * 1000)) * priceMicros(price), 60_000n)
}

/** Micro-credits for `seconds` of video at a per-second price, rounded up. */
export function chargePerSecond(price: number | undefined, seconds: number): bigint {
  return divideUp(BigInt(Math.ceil(trustedSeconds(seconds, 'seconds') * 1000)) * priceMicros(price), 1000n)
}
