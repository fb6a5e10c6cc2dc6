import { periodKey } from './periods'

/** One credit lease (credit-lease.ts): a hold on a wallet in the database, drawn from in memory. */
export interface Lease {
  id: string
  walletId: string
  /** Which calls draw from it: its wallet's, or (leaseKeyOf) one quota key's alone. */
  key: string
  /** A lease of a payer with a spend limit counts in the spend rows of this day (YYYY-MM-DD, with its week and month) and serves calls only on it. */
  quotaDay: string | null
  /** What the database granted, and when. */
  granted: bigint
  takenAt: number
  /** What its draws reserved in all: the wallet's rate while it was current. */
  drawn: bigint
  /** What the database holds for the lease, as far as this process knows. */
  amount: bigint
  /** Open draws, and charges submitted that have not landed: what the lease must keep. */
  committed: bigint
  /** No new draws: a newer lease took over, its credit was given back or recalled, its hold is gone, or the process is stopping. */
  retired: boolean
  lastUsed: number
  /** When its hold expires as far as this process knows: taken or renewed (the heartbeat) until then. */
  expiresAt: number
}

/** A lease just granted by the database: nothing drawn, current until its hold's expiry. */
export function grantedLease(taken: Pick<Lease, 'id' | 'walletId' | 'key' | 'quotaDay' | 'granted' | 'takenAt'> & { ttlMs: number }): Lease {
  const { ttlMs, ...fields } = taken
  return { ...fields, drawn: 0n, amount: taken.granted, committed: 0n, retired: false, lastUsed: taken.takenAt, expiresAt: taken.takenAt + ttlMs }
}

/** A lease serves a draw of `amount` while it is not retired, has the credit left, its hold is surely still in the database, and (a limited payer's) its day is today. */
export function canServe(lease: Lease, amount: bigint, now: number): boolean {
  if (lease.quotaDay !== null && lease.quotaDay !== periodKey('day', new Date(now))) return false
  return !lease.retired && lease.amount - lease.committed >= amount && now < lease.expiresAt
}

/** Less than half of what the lease was granted is left to draw: time to take the next one (docs/billing.md#credit-lease). */
export function runningLow(lease: Lease): boolean {
  return lease.amount - lease.committed < lease.granted / 2n
}

/** A call drew `amount` from the lease at `now`: it is committed until the call's charge lands or is given back. */
export function recordDraw(lease: Lease, amount: bigint, now: number): void {
  lease.committed += amount
  lease.drawn += amount
  lease.lastUsed = now
}
