/**
 * How much credit a new lease asks for (docs/billing.md#credit-lease): enough for a wallet's
 * calls of the next couple of seconds at the rate it draws, and no more, so a quiet wallet locks
 * little of its credit and a crash can lose little, while a busy one takes a new lease rarely.
 *
 * A wallet's first lease covers a few of its calls. A lease used up sooner than LEASE_SPAN_MS
 * after it was taken means the wallet draws faster than its lease size: the next is as large as
 * its rate over that span (at most 8 times the last, at most `maxLease`). A lease that lasted
 * longer means the size is enough, or more than enough: the next is scaled down to the rate it
 * saw, never below a few calls. The database still caps each grant at a share of the wallet's
 * available credit (lease-statements.ts).
 */
export class LeaseSizer {
  /** Wallet -> the size its next lease asks for, in micro-credits. */
  private readonly sizes = new Map<string, bigint>()

  constructor(private readonly maxLease: bigint) {}

  /** What a new lease on the wallet asks for, for a call reserving `amount`. */
  wanted(walletId: string, amount: bigint): bigint {
    const floor = amount * FIRST_LEASE_CALLS
    const size = this.sizes.get(walletId) ?? floor
    return clamp(size < floor ? floor : size, amount, this.maxLease)
  }

  /**
   * A lease of `size` on the wallet, taken `lifetimeMs` ago, has had `drawn` drawn from it: the
   * wallet's next lease is sized to that rate. Told when a lease's successor is taken (ahead of
   * need or because it ran out) and when the successor replaces it.
   */
  observe(walletId: string, size: bigint, drawn: bigint, lifetimeMs: number): void {
    const lifetime = BigInt(Math.max(1, Math.round(lifetimeMs)))
    // The credit the wallet would draw over one span at the rate this lease saw.
    const atRate = (drawn * LEASE_SPAN_MS) / lifetime
    const next = atRate > size * MAX_GROWTH ? size * MAX_GROWTH : atRate
    if (this.sizes.size >= MAX_REMEMBERED && !this.sizes.has(walletId)) this.sizes.clear()
    this.sizes.set(walletId, clamp(next, 1n, this.maxLease))
  }

  /** The wallet went quiet (its lease was given back idle): its next lease starts small again. */
  forget(walletId: string): void {
    this.sizes.delete(walletId)
  }
}

/** A wallet's first lease covers this many calls like the one that takes it. */
const FIRST_LEASE_CALLS = 8n
/** A lease is sized to last about this long at its wallet's rate (ms). */
const LEASE_SPAN_MS = 2_000n
/** A lease is at most this many times its predecessor. */
const MAX_GROWTH = 8n
/** Wallets whose sizes are remembered; past this the memory starts over (every size is relearnt in a lease or two). */
const MAX_REMEMBERED = 100_000

function clamp(value: bigint, low: bigint, high: bigint): bigint {
  if (value > high) return high
  return value < low ? low : value
}
