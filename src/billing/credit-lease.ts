import type { DatabaseHandle } from '../db/client'
import { describeDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { logEvent } from '../observability/log'
import { newId } from '../util/ids'
import type { Hold, HoldRequest } from './hold-book'
import { monthKey } from './hold-rows'
import { releaseLeaseAtomically, takeLeaseAtomically } from './lease-statements'
import type { Payer } from './payer'

export interface CreditLeaseOptions {
  instanceId: string
  ttlMs: number
  now: () => number
  /** The most one lease reserves, in micro-credits (TOLLGATE_CREDIT_LEASE). */
  maxLease: bigint
  /** A lease takes at most 1/share of what its wallet has available. */
  share?: bigint
  /** A lease nothing has drawn from for this long is given back (default 5 s). */
  idleMs?: number
}

/** One lease: a hold on a wallet in the database, drawn from in memory. */
interface Lease {
  id: string
  walletId: string
  /** What the database holds for the lease, as far as this process knows. */
  amount: bigint
  /** Open draws, and charges submitted that have not landed: what the lease must keep. */
  committed: bigint
  /** No new draws: a newer lease took over, or the process is stopping. */
  retired: boolean
  lastUsed: number
}

const DEFAULT_SHARE = 8n
const DEFAULT_IDLE_MS = 5_000

/**
 * The credit lease (docs/billing.md#credit-lease): this process reserves part of a wallet as one
 * hold in the database and takes its calls' holds from it in memory, so a call on a busy wallet
 * has no database round trip on its path; its charge is answered at once and lands a few
 * milliseconds later, batched with others (HoldBook.close).
 *
 * The database still makes overspending impossible across instances: a lease is a hold like any
 * other, and a draw never exceeds what its lease has left. A lease takes at most 1/share of the
 * wallet's available credit and never less than the call that asked for it; when the wallet is
 * too low for that, calls are held exactly, one hold each. Before a call is refused for want of
 * credit, this process gives back what its own leases on that wallet do not need (see
 * HoldBook.take), so a lease never refuses a call a lease-less gateway would accept.
 *
 * A crash loses the charges answered and not yet written (at most the lease), besides the calls
 * in flight that are never charged in any case; the unused rest of each lease comes back to its
 * wallet when the sweep expires its hold.
 */
export class CreditLeases {
  /** The lease each wallet draws from now. */
  private readonly current = new Map<string, Lease>()
  /** Every lease this process has open: current and retired. */
  private readonly open = new Map<string, Lease>()
  /** Draw (hold id) -> its lease. */
  private readonly draws = new Map<string, Lease>()
  /** Leases being taken, one per wallet at a time; calls that need one meanwhile wait for it. */
  private readonly taking = new Map<string, Promise<Lease | undefined>>()
  /** Releases under way: a stopping process waits for them. */
  private readonly releasing = new Set<Promise<unknown>>()
  private stopped = false
  private idleTimer: ReturnType<typeof setInterval> | undefined
  private readonly share: bigint
  private readonly idleMs: number

  constructor(
    private readonly database: Pick<DatabaseHandle, 'rows'>,
    private readonly options: CreditLeaseOptions,
  ) {
    this.share = options.share ?? DEFAULT_SHARE
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS
  }

  /** A hold drawn from a lease on the payer's wallet, or undefined: the call is then held exactly. */
  async draw(request: HoldRequest): Promise<Hold | undefined> {
    // A key with a monthly quota counts each open hold against its month: those stay exact.
    // A call larger than a whole lease is held on its own rather than churning leases.
    if (this.stopped || request.payer.monthlyQuota !== null || request.amount <= 0n || request.amount > this.options.maxLease) return undefined
    const walletId = request.payer.walletId
    const drawable = this.current.get(walletId)
    if (drawable && drawable.amount - drawable.committed >= request.amount) return this.drawFrom(drawable, request)
    const lease = await this.newLease(request)
    // Others may have drawn from it, or given it back, while it was being taken.
    if (!lease || lease.retired || lease.amount - lease.committed < request.amount) return undefined
    return this.drawFrom(lease, request)
  }

  /** The lease a drawn hold came from, or undefined for a hold of its own. */
  leaseOf(hold: Hold): string | undefined {
    return this.draws.get(hold.id)?.id
  }

  /** A draw's call ended: `charged` of it was taken from the lease (0n for a release), `landed` when that reached the database. */
  finished(hold: Hold, charged: bigint, landed: boolean): void {
    const lease = this.draws.get(hold.id)
    if (!lease) return
    this.draws.delete(hold.id)
    lease.committed -= hold.amount
    if (landed) lease.amount -= charged
    else {
      // Its charge did not land (given up, or the lease had expired): the lease draws no more,
      // and what the database still holds of it goes back with its release or the sweep.
      lease.retired = true
      if (this.current.get(lease.walletId) === lease) this.current.delete(lease.walletId)
    }
    lease.lastUsed = this.options.now()
    if (lease.retired && lease.committed === 0n && this.open.has(lease.id)) void this.release(lease, null)
  }

  /**
   * Gives back what this process's leases on a wallet hold beyond their open draws; true when
   * anything went back, so a call refused for want of credit is worth trying again.
   */
  async returnUnused(walletId: string): Promise<boolean> {
    // A lease being taken right now would hold credit this call may need: it is counted too.
    await this.taking.get(walletId)
    let returned = false
    for (const lease of [...this.open.values()]) {
      if (lease.walletId !== walletId) continue
      lease.retired = true
      if (this.current.get(walletId) === lease) this.current.delete(walletId)
      const unused = lease.amount - lease.committed
      if (unused <= 0n) continue
      returned = (await this.release(lease, lease.committed === 0n ? null : unused)) || returned
    }
    return returned
  }

  /** Lease holds the heartbeat keeps alive. */
  liveLeaseIds(): string[] {
    return [...this.open.keys()]
  }

  /** Calls holding credit drawn from a lease now. */
  openDrawCount(): number {
    return this.draws.size
  }

  /** Gives back leases nothing drew from for a while (called by the sweeper's tick). */
  async returnIdle(): Promise<void> {
    const idleSince = this.options.now() - this.idleMs
    for (const lease of [...this.open.values()]) {
      if (lease.committed === 0n && lease.lastUsed <= idleSince) await this.release(lease, null)
    }
  }

  /** Stops drawing and gives back every lease once its calls have ended (waits at most `timeoutMs`). */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true
    clearInterval(this.idleTimer)
    for (const lease of this.open.values()) lease.retired = true
    this.current.clear()
    const deadline = this.options.now() + timeoutMs
    for (;;) {
      for (const lease of [...this.open.values()]) if (lease.committed === 0n) void this.release(lease, null)
      if (this.open.size === 0 && this.releasing.size === 0) return
      if (this.options.now() >= deadline) return
      await Promise.race([Promise.allSettled([...this.releasing]), Bun.sleep(50)])
    }
  }

  private drawFrom(lease: Lease, request: HoldRequest): Hold {
    lease.committed += request.amount
    lease.lastUsed = this.options.now()
    const hold: Hold = { ...request, id: newId('hold'), month: monthKey(new Date(this.options.now())) }
    this.draws.set(hold.id, lease)
    return hold
  }

  /** Takes a new lease for the request's wallet, or joins the one being taken. */
  private newLease(request: HoldRequest): Promise<Lease | undefined> {
    const walletId = request.payer.walletId
    const under = this.taking.get(walletId)
    if (under) return under
    const taking = this.takeLease(request).finally(() => this.taking.delete(walletId))
    this.taking.set(walletId, taking)
    return taking
  }

  private async takeLease(request: HoldRequest): Promise<Lease | undefined> {
    const { walletId } = request.payer
    const now = new Date(this.options.now())
    const id = newId('lease')
    const payer: Payer = { ...request.payer, keyId: null, env: null, monthlyQuota: null, tokensPerMinute: null }
    let granted: bigint
    try {
      granted = await retryingDeadlocks(() =>
        takeLeaseAtomically(this.database, {
          id,
          payer,
          wanted: this.options.maxLease,
          minimum: request.amount,
          share: this.share,
          instanceId: this.options.instanceId,
          month: monthKey(now),
          now,
          expiresAt: new Date(now.getTime() + this.options.ttlMs),
        }),
      )
    } catch (error) {
      // The statement's outcome is unknown: a lease it may have taken expires by the sweep.
      logEvent('warn', 'could not take a credit lease; holding exactly', { error: describeDatabaseError(error) })
      return undefined
    }
    if (granted === 0n) return undefined
    const lease: Lease = { id, walletId, amount: granted, committed: 0n, retired: false, lastUsed: now.getTime() }
    if (!this.idleTimer) {
      this.idleTimer = setInterval(() => void this.returnIdle(), this.idleMs)
      // Leases left over are the sweep's: they never keep a process from exiting.
      this.idleTimer.unref()
    }
    const previous = this.current.get(walletId)
    this.open.set(id, lease)
    this.current.set(walletId, lease)
    if (previous) {
      previous.retired = true
      if (previous.committed === 0n) void this.release(previous, null)
    }
    return lease
  }

  /** Gives back `amount` of a lease, or (null) all of it; true when the database took it. */
  private release(lease: Lease, amount: bigint | null): Promise<boolean> {
    const whole = amount === null
    if (whole) {
      // No draw can come in meanwhile: the lease leaves every map before the statement runs.
      this.open.delete(lease.id)
      if (this.current.get(lease.walletId) === lease) this.current.delete(lease.walletId)
    } else lease.amount -= amount
    const releasing = retryingDeadlocks(() => releaseLeaseAtomically(this.database, lease.id, amount, new Date(this.options.now())))
      .then(() => true)
      .catch((error: unknown) => {
        // Whether it landed is unknown: the lease draws no more, and what the database still
        // holds of it goes back with its last release or, failing that, by the sweep.
        lease.retired = true
        if (this.current.get(lease.walletId) === lease) this.current.delete(lease.walletId)
        logEvent('warn', 'could not give back a credit lease; the sweep will', { lease_id: lease.id, error: describeDatabaseError(error) })
        return false
      })
      .finally(() => this.releasing.delete(releasing))
    this.releasing.add(releasing)
    return releasing
  }
}
