import type { DatabaseHandle } from '../db/client'
import { describeDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { logEvent } from '../observability/log'
import { canServe, type Lease } from './lease'
import type { LeaseSizer } from './lease-sizing'
import { type LeaseReturn, releaseLeaseAtomically } from './lease-statements'

/**
 * The credit leases this process holds in the database (docs/billing.md#credit-lease): the one
 * each lease key draws from now, the one taken ahead behind it, those retired and not yet given
 * back, and giving them back.
 */
export class OpenLeases {
  /** The lease each key draws from now. */
  private readonly current = new Map<string, Lease>()
  /** The lease taken ahead for each key whose current one runs low: current when that one runs out. */
  private readonly ahead = new Map<string, Lease>()
  /** Every lease this process has open: current, ahead and retired. */
  private readonly open = new Map<string, Lease>()
  /** Give-backs under way: a stopping process waits for them. */
  private readonly releasing = new Set<Promise<unknown>>()

  constructor(
    private readonly database: Pick<DatabaseHandle, 'rows'>,
    private readonly now: () => number,
    private readonly sizer: LeaseSizer,
  ) {}

  /** A lease just taken: the one its key draws from at once, or (`ahead`) the one behind its current one. */
  add(lease: Lease, role: 'current' | 'ahead'): void {
    this.open.set(lease.id, lease)
    if (role === 'ahead' && this.current.has(lease.key)) this.ahead.set(lease.key, lease)
    else this.install(lease)
  }

  /** The lease a call on `key` draws from: the current one while it can cover `amount`, then the one taken ahead. */
  drawable(key: string, amount: bigint): Lease | undefined {
    const current = this.current.get(key)
    if (current && canServe(current, amount, this.now())) return current
    const ahead = this.ahead.get(key)
    if (!ahead) return undefined
    this.ahead.delete(key)
    this.install(ahead)
    return canServe(ahead, amount, this.now()) ? ahead : undefined
  }

  aheadOf(key: string): Lease | undefined {
    return this.ahead.get(key)
  }

  get(id: string): Lease | undefined {
    return this.open.get(id)
  }

  has(lease: Lease): boolean {
    return this.open.has(lease.id)
  }

  /** A copy: giving a lease back while going through them leaves the list as it was. */
  list(): Lease[] {
    return [...this.open.values()]
  }

  ids(): string[] {
    return [...this.open.keys()]
  }

  /** No lease left open and no give-back under way. */
  allGivenBack(): boolean {
    return this.open.size === 0 && this.releasing.size === 0
  }

  /** Settles when the give-backs under way have. */
  givingBack(): Promise<unknown> {
    return Promise.allSettled([...this.releasing])
  }

  /** The lease draws no more; it goes back once its calls end. */
  retire(lease: Lease): void {
    lease.retired = true
    this.unlist(lease)
  }

  /** A sweep expired the lease's hold: it draws no more, and there is nothing left of it to give back or renew. */
  expired(lease: Lease): void {
    this.open.delete(lease.id)
    this.retire(lease)
  }

  /** Gives back `amount` of a lease, or `all` of it; true when the database took it. */
  giveBack(lease: Lease, amount: LeaseReturn): Promise<boolean> {
    if (amount === 'all') {
      // No draw can come in meanwhile: the lease leaves every map before the statement runs.
      this.open.delete(lease.id)
      this.unlist(lease)
    } else lease.amount -= amount
    const releasing = retryingDeadlocks(() => releaseLeaseAtomically(this.database, lease.id, amount, new Date(this.now())))
      .then(() => true)
      .catch((error: unknown) => {
        // Whether it landed is unknown: the lease draws no more, and what the database still
        // holds of it goes back with its last release or, failing that, by the sweep.
        this.retire(lease)
        logEvent('warn', 'could not give back a credit lease; the sweep will', { lease_id: lease.id, error: describeDatabaseError(error) })
        return false
      })
      .finally(() => this.releasing.delete(releasing))
    this.releasing.add(releasing)
    return releasing
  }

  /** Retires the leases on a wallet and gives back what they hold beyond their open draws; true when anything went back. */
  async returnUnused(walletId: string): Promise<boolean> {
    let returned = false
    for (const lease of this.list()) {
      if (lease.walletId !== walletId) continue
      this.retire(lease)
      const unused = lease.amount - lease.committed
      if (unused <= 0n) continue
      returned = (await this.giveBack(lease, lease.committed === 0n ? 'all' : unused)) || returned
    }
    return returned
  }

  /** Gives back the leases nothing drew from since `idleSince`; a current one's key starts small again (lease-sizing.ts). */
  async returnIdle(idleSince: number): Promise<void> {
    for (const lease of this.list()) {
      if (lease.committed !== 0n || lease.lastUsed > idleSince) continue
      if (this.current.get(lease.key) === lease) this.sizer.forget(lease.key)
      await this.giveBack(lease, 'all')
    }
  }

  /** Makes a lease the one its key draws from; the one it replaces draws no more and goes back once its calls end. */
  private install(lease: Lease): void {
    const previous = this.current.get(lease.key)
    this.current.set(lease.key, lease)
    if (!previous || previous === lease) return
    this.sizer.observe(lease.key, previous.granted, previous.drawn, this.now() - previous.takenAt)
    this.retire(previous)
    if (previous.committed === 0n) void this.giveBack(previous, 'all')
  }

  /** A lease draws no more as current or taken ahead. */
  private unlist(lease: Lease): void {
    if (this.current.get(lease.key) === lease) this.current.delete(lease.key)
    if (this.ahead.get(lease.key) === lease) this.ahead.delete(lease.key)
  }
}
