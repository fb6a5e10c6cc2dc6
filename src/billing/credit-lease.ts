import type { DatabaseHandle } from '../db/client'
import { logEvent } from '../observability/log'
import type { HoldRequest } from './hold'
import { canServe, type Lease, recordDraw, runningLow } from './lease'
import { type LeaseableRefusal, leaseKeyOf, walletOfLeaseKey } from './lease-keys'
import { LeaseRecalls } from './lease-recall'
import { retryRefused } from './lease-refusals'
import { LeaseSizer } from './lease-sizing'
import { type LeaseTaker, takeLease } from './lease-taking'
import { OpenLeases } from './open-leases'

export interface CreditLeaseOptions {
  instanceId: string
  ttlMs: number
  now: () => number
  /** The most one lease reserves, in micro-credits (TOLLGATE_CREDIT_LEASE); each asks for what its wallet's rate needs (lease-sizing.ts). */
  maxLease: bigint
  /** A lease takes at most 1/share of what its wallet has available. */
  share?: bigint
  /** A lease nothing has drawn from for this long is given back (default 1 s). */
  idleMs?: number
  /** How often leases are checked for idleness and recalls (default 250 ms). */
  checkMs?: number
  /** How long a recalled wallet takes no new lease (default 5 s). */
  recallMs?: number
}

const DEFAULT_SHARE = 8n
const DEFAULT_IDLE_MS = 1_000
const DEFAULT_CHECK_MS = 250
const DEFAULT_RECALL_MS = 5_000
/** How many leases one call may wait for in a burst before it is held exactly. */
const BURST_LEASES = 3

/**
 * The credit lease (docs/billing.md#credit-lease): this process reserves part of a wallet as one
 * hold in the database and takes its calls' holds from it in memory, so a call on a busy wallet
 * has no database round trip on its path; its charge is answered at once and lands a few
 * milliseconds later, batched with others (leased-holds.ts).
 *
 * The database still makes overspending impossible across instances: a lease is a hold like any
 * other, and a draw never exceeds what its lease has left. A lease takes at most 1/share of the
 * wallet's available credit and never less than the call that asked for it; when the wallet is
 * too low for that, calls are held exactly, one hold each. Before a call is refused for want of
 * credit, this process gives back what its own leases on that wallet do not need, and when
 * other instances hold leases on the wallet, it recalls them and waits a moment for their unused
 * credit (retryRefused), so a lease never refuses a call a lease-less gateway would accept.
 *
 * A lease is drawn from only until the expiry its last renewal confirmed: past that, a sweep
 * elsewhere may have expired it. A charge that lands after its lease was expired is taken from
 * the wallet's available credit instead (lapsed-charges.ts).
 *
 * A crash loses the charges answered and not yet written (at most the lease), besides the calls
 * in flight that are never charged in any case; the unused rest of each lease comes back to its
 * wallet when the sweep expires its hold.
 */
export class CreditLeases {
  /** The leases this process holds, and which one each key draws from. */
  private readonly leases: OpenLeases
  /** Leases being taken, one per key at a time; calls that need one meanwhile wait for it. */
  private readonly taking = new Map<string, Promise<Lease | undefined>>()
  private readonly recalls: LeaseRecalls
  private readonly sizer: LeaseSizer
  private readonly taker: LeaseTaker
  private readonly idleMs: number
  private stopped = false
  private checking = false
  private checkTimer: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly database: Pick<DatabaseHandle, 'rows'>,
    private readonly options: CreditLeaseOptions,
  ) {
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS
    this.recalls = new LeaseRecalls(database, { instanceId: options.instanceId, now: options.now, recallMs: options.recallMs ?? DEFAULT_RECALL_MS })
    this.sizer = new LeaseSizer(options.maxLease)
    this.leases = new OpenLeases(database, options.now, this.sizer)
    const { instanceId, ttlMs, now } = options
    this.taker = { instanceId, ttlMs, now, share: options.share ?? DEFAULT_SHARE, sizer: this.sizer, recalls: this.recalls }
  }

  /** The lease a call's worst case is drawn from (its wallet's, or a limited key's or user's own), or undefined: the call is then held exactly. */
  async draw(request: HoldRequest): Promise<Lease | undefined> {
    // A call larger than a whole lease is held on its own rather than churning leases.
    if (this.stopped || request.amount <= 0n || request.amount > this.options.maxLease) return undefined
    const walletId = request.payer.walletId
    const key = leaseKeyOf(request.payer)
    if (this.recalls.isRecalled(walletId)) return undefined
    const drawable = this.leases.drawable(key, request.amount)
    if (drawable) {
      this.drawFrom(drawable, request.amount)
      this.takeAheadIfLow(drawable, request)
      return drawable
    }
    // A burst of calls on a wallet can use up a new lease while it is being taken: the calls
    // left over take the next, larger one (lease-sizing.ts) rather than a hold each.
    for (let attempt = 0; attempt < BURST_LEASES; attempt++) {
      const lease = await this.newLease(request)
      if (!lease || this.stopped || this.recalls.isRecalled(walletId)) return undefined
      // Others may have drawn from it, or given it back, while it was being taken.
      const next = this.leases.drawable(key, request.amount) ?? (canServe(lease, request.amount, this.options.now()) ? lease : undefined)
      if (next) return this.drawFrom(next, request.amount)
    }
    return undefined
  }

  /** A call was refused for want of credit: what the leases keep unused comes back first (lease-refusals.ts). */
  retryRefused<T>(request: HoldRequest, retake: () => Promise<T>, refusal: LeaseableRefusal): Promise<T> {
    return retryRefused({ recalls: this.recalls, returnUnused: (walletId) => this.returnUnused(walletId) }, request, retake, refusal)
  }

  /**
   * The heartbeat renewed `renewed` of the lease holds it was asked to (`asked`) until
   * `expiresAt`; a lease it did not find was expired by a sweep: it draws no more, and the
   * charges of its open draws are taken from the wallet when they land.
   */
  confirmRenewal(asked: string[], renewed: Set<string>, expiresAt: number): void {
    for (const id of asked) {
      const lease = this.leases.get(id)
      if (!lease) continue
      if (renewed.has(id)) {
        if (expiresAt > lease.expiresAt) lease.expiresAt = expiresAt
        continue
      }
      logEvent('warn', 'a credit lease was expired by a sweep while in use', { lease_id: id })
      this.leases.expired(lease)
    }
  }

  /** A call that drew `held` from the lease ended: `charged` of it was taken (0n for a release), `landed` when that reached the database. */
  finished(lease: Lease, held: bigint, charged: bigint, landed: boolean): void {
    lease.committed -= held
    if (landed) lease.amount -= charged
    else {
      // Its charge did not land (given up, or the lease had expired): the lease draws no more,
      // and what the database still holds of it goes back with its release or the sweep.
      this.leases.retire(lease)
    }
    lease.lastUsed = this.options.now()
    if (lease.retired && lease.committed === 0n && this.leases.has(lease)) void this.leases.giveBack(lease, 'all')
  }

  /** Checks for idle leases and recalled wallets (the check timer's tick); a database that does not answer is tried again next tick. */
  async check(): Promise<void> {
    if (this.checking) return
    this.checking = true
    try {
      await this.returnIdle()
      await this.answerRecalls()
    } catch {
      // Out of reach: leases keep their credit until the next tick, as if no recall had come yet.
    } finally {
      this.checking = false
    }
  }

  /** Gives back what this process's leases on a wallet hold beyond their open draws; true when anything went back. */
  async returnUnused(walletId: string): Promise<boolean> {
    // A lease being taken right now would hold credit this call may need: it is counted too.
    await Promise.all([...this.taking].filter(([key]) => walletOfLeaseKey(key) === walletId).map(([, taking]) => taking))
    return this.leases.returnUnused(walletId)
  }

  /** Lease holds the heartbeat keeps alive. */
  liveLeaseIds(): string[] {
    return this.leases.ids()
  }

  /** Gives back leases nothing drew from for a while (idleMs). */
  returnIdle(): Promise<void> {
    return this.leases.returnIdle(this.options.now() - this.idleMs)
  }

  /** Stops drawing and gives back every lease once its calls have ended (waits at most `timeoutMs`). */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true
    clearInterval(this.checkTimer)
    for (const lease of this.leases.list()) this.leases.retire(lease)
    const deadline = this.options.now() + timeoutMs
    for (;;) {
      for (const lease of this.leases.list()) if (lease.committed === 0n) void this.leases.giveBack(lease, 'all')
      if (this.leases.allGivenBack()) return
      if (this.options.now() >= deadline) return
      await Promise.race([this.leases.givingBack(), Bun.sleep(50)])
    }
  }

  /** Another instance recalled the wallet's leases: each gives back what it does not need, and none is taken for a while. */
  private async answerRecalls(): Promise<void> {
    const walletIds = [...new Set(this.leases.list().map((lease) => lease.walletId))]
    for (const walletId of await this.recalls.recalledAmong(walletIds)) await this.returnUnused(walletId)
  }

  /**
   * A busy wallet's next lease is taken while its current one still has half its credit left, so
   * no call waits for a lease's round trip (nor for the charges queued before it) when the
   * current one runs out. A lease taken ahead and never needed goes back when the wallet idles.
   */
  private takeAheadIfLow(lease: Lease, request: HoldRequest): void {
    // A limited payer's room is scarce: a second lease there would hold room another instance's call may need.
    if (!runningLow(lease) || lease.quotaDay !== null) return
    if (this.leases.aheadOf(lease.key) || this.taking.has(lease.key)) return
    this.sizer.observe(lease.key, lease.granted, lease.drawn, this.options.now() - lease.takenAt)
    this.newLease(request, 'ahead').catch(() => {
      // Out of reach: the call that finds the current lease used up takes the next one itself.
    })
  }

  /** A call draws `amount` from the lease. */
  private drawFrom(lease: Lease, amount: bigint): Lease {
    recordDraw(lease, amount, this.options.now())
    // The lease waiting behind a busy one is in use too: it is not given back as idle.
    const ahead = this.leases.aheadOf(lease.key)
    if (ahead) ahead.lastUsed = lease.lastUsed
    return lease
  }

  /** Takes a new lease for the request's wallet (current at once, or `ahead` of the current one), or joins the one being taken. */
  private newLease(request: HoldRequest, role: 'current' | 'ahead' = 'current'): Promise<Lease | undefined> {
    const key = leaseKeyOf(request.payer)
    const under = this.taking.get(key)
    if (under) return under
    const taking = this.openLease(request, role).finally(() => this.taking.delete(key))
    this.taking.set(key, taking)
    return taking
  }

  /** Takes a lease in the database (lease-taking.ts) and opens it here; the first one starts the check timer. */
  private async openLease(request: HoldRequest, role: 'current' | 'ahead'): Promise<Lease | undefined> {
    const lease = await takeLease(this.database, this.taker, request)
    if (!lease) return undefined
    if (!this.checkTimer && !this.stopped) {
      this.checkTimer = setInterval(() => void this.check(), this.options.checkMs ?? DEFAULT_CHECK_MS)
      // Leases left over are the sweep's: they never keep a process from exiting.
      this.checkTimer.unref()
    }
    this.leases.add(lease, role)
    return lease
  }
}
