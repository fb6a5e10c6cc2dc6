/**
 * Credits cross the JSON edge as numbers with up to six decimals; inside they are integer
 * micro-credits (bigint). These are the only two conversions.
 */

export const MICROS_PER_CREDIT = 1_000_000n
/** Larger amounts are surely typos, and beyond it doubles stop holding six decimals exactly. */
export const MAX_CREDITS = 1_000_000_000
/**
 * The largest hold one call may take (MAX_CREDITS): far beyond any real request, and small
 * enough that a batch of 500 such holds, their sum and any cost recorded against them stay
 * well inside Postgres's bigint (9.2e18). The database refuses larger holds too.
 */
export const MAX_HOLD_MICROS = BigInt(MAX_CREDITS) * MICROS_PER_CREDIT

/** Exact: goes through the decimal text, never through a float multiplication. Undefined when `credits` has more than six decimals or is out of range. */
export function creditsToMicros(credits: number): bigint | undefined {
  if (!Number.isFinite(credits) || Math.abs(credits) > MAX_CREDITS) return undefined
  const fixed = credits.toFixed(6)
  if (Number(fixed) !== credits) return undefined
  return BigInt(fixed.replace('.', ''))
}

export function microsToCredits(micros: bigint): number {
  // Through decimal text, so the result is the double nearest the exact amount.
  const sign = micros < 0n ? '-' : ''
  const magnitude = micros < 0n ? -micros : micros
  const fraction = (magnitude % MICROS_PER_CREDIT).toString().padStart(6, '0')
  return Number(`${sign}${magnitude / MICROS_PER_CREDIT}.${fraction}`)
}

export interface BalanceView {
  balance: number
  held: number
  available: number
}

export function balanceView(wallet: { balance: bigint; held: bigint }): BalanceView {
  return {
    balance: microsToCredits(wallet.balance),
    held: microsToCredits(wallet.held),
    available: microsToCredits(wallet.balance - wallet.held),
  }
}

/** JSON text written as it is (Bun and V8 implement the JSON.rawJSON proposal; TypeScript's lib does not declare it yet). */
type RawJson = { readonly rawJSON: string }
const rawJson = (JSON as unknown as { rawJSON(text: string): RawJson }).rawJSON

/**
 * A credit amount as JSON writes it: the exact decimal digits, never exponent notation
 * (0.000008, not 8e-06), so a client reconciling charges reads the ledger's micro-credits
 * exactly. JSON.stringify and Response.json write it as a plain number.
 */
export function creditsJson(micros: bigint): RawJson {
  const sign = micros < 0n ? '-' : ''
  const magnitude = micros < 0n ? -micros : micros
  const fraction = (magnitude % MICROS_PER_CREDIT).toString().padStart(6, '0')
  return rawJson(`${sign}${magnitude / MICROS_PER_CREDIT}.${fraction}`)
}
