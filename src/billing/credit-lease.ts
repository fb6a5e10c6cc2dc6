import type { DatabaseHandle } from '../db/client'
import { describeDatabaseError, isTransientDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { logEvent } from '../observability/log'
import { newId } from '../util/ids'
import type { Hold, HoldRequest } from './hold'
import { monthKey } from './hold-rows'
import { canServe, grantedLease, type Lease, recordDraw, runningLow } from './lease'
import { isLeaseableRefusal, type LeaseableRefusal, leaseKeyOf, walletOfLeaseKey } from './lease-keys'
import { LeaseRecalls } from './lease-recall'
import { LeaseSizer } from './lease-sizing'
import { releaseLeaseAtomically, takeLeaseAtomically } from './lease-statements'
import type { Payer } from './payer'

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
 * A call refused while other instances' leases could cover it is tried again after each of these
 * pauses (1.5 s in all), while those instances answer the recall (they check every 250 ms). A
 * count of tries rather than a deadline: an event loop stalled meanwhile still leaves them time.
 */
const RECALL_RETRY_PAUSES_MS = [50, 100, 200, 400, 400, 350]

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
  /** The lease each wallet draws from now. */
  private readonly current = new Map<string, Lease>()
  /** The lease taken ahead for each wallet whose current one runs low: current when that one runs out. */
  private readonly ahead = new Map<string, Lease>()
  /** Every lease this process has open: current and retired. */
  private readonly open = new Map<string, Lease>()
  /** Draw (hold id) -> its lease. */
  private readonly draws = new Map<string, Lease>()
  /** Leases being taken, one per wallet at a time; calls that need one meanwhile wait for it. */
  private readonly taking = new Map<string, Promise<Lease | undefined>>()
  /** Releases under way: a stopping process waits for them. */
  private readonly releasing = new Set<Promise<unknown>>()
  private readonly recalls: LeaseRecalls
  private stopped = false
  private checking = false
  private checkTimer: ReturnType<typeof setInterval> | undefined
  private readonly share: bigint
  private readonly idleMs: number
  private readonly sizer: LeaseSizer

  constructor(
    private readonly database: Pick<DatabaseHandle, 'rows'>,
    private readonly options: CreditLeaseOptions,
  ) {
    this.share = options.share ?? DEFAULT_SHARE
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS
    this.recalls = new LeaseRecalls(database, { instanceId: options.instanceId, now: options.now, recallMs: options.recallMs ?? DEFAULT_RECALL_MS })
    this.sizer = new LeaseSizer(options.maxLease)
  }

  /** A hold drawn from a lease on the payer's wallet (a quota key's own lease), or undefined: the call is then held exactly. */
  async draw(request: HoldRequest): Promise<Hold | undefined> {
    // A call larger than a whole lease is held on its own rather than churning leases.
    if (this.stopped || request.amount <= 0n || request.amount > this.options.maxLease) return undefined
    const walletId = request.payer.walletId
    const key = leaseKeyOf(request.payer)
    if (this.recalls.isRecalled(walletId)) return undefined
    const drawable = this.drawable(key, request.amount)
    if (drawable) {
      const hold = this.drawFrom(drawable, request)
      this.takeAheadIfLow(drawable, request)
      return hold
    }
    // A burst of calls on a wallet can use up a new lease while it is being taken: the calls
    // left over take the next, larger one (lease-sizing.ts) rather than a hold each.
    for (let attempt = 0; attempt < BURST_LEASES; attempt++) {
      const lease = await this.newLease(request)
      if (!lease || this.stopped || this.recalls.isRecalled(walletId)) return undefined
      // Others may have drawn from it, or given it back, while it was being taken.
      const next = this.drawable(key, request.amount) ?? (canServe(lease, request.amount, this.options.now()) ? lease : undefined)
      if (next) return this.drawFrom(next, request)
    }
    return undefined
  }

  /**
   * A call was refused for want of credit: gives back what this process's own leases on the
   * wallet do not need and tries again; if other instances hold leases on the wallet, recalls
   * them and tries again for about 1.5 s while they give back theirs, else once more.
   */
  async retryRefused<T>(request: HoldRequest, retake: () => Promise<T>, refusal: LeaseableRefusal): Promise<T> {
    const walletId = request.payer.walletId
    // A wallet this low takes no new lease here for a while: a lease taken by another call
    // meanwhile would keep the very credit given back below.
    this.recalls.mark(walletId)
    let refused = refusal
    if (await this.returnUnused(walletId)) {
      try {
        return await retake()
      } catch (error) {
        if (!isLeaseableRefusal(error)) throw error
        refused = error
      }
    }
    // No other instance's lease holds credit: none did, or theirs went back since the retake above
    // (their own refusals give it back). One more try then answers as exact holds would.
    if (!(await this.recalls.recall(walletId, request.amount))) return retake()
    for (const pause of RECALL_RETRY_PAUSES_MS) {
      await Bun.sleep(pause)
      try {
        return await retake()
      } catch (error) {
        if (!isLeaseableRefusal(error)) throw error
        refused = error
      }
    }
    throw refused
  }

  /**
   * The heartbeat renewed `renewed` of the lease holds it was asked to (`asked`) until
   * `expiresAt`; a lease it did not find was expired by a sweep: it draws no more, and the
   * charges of its open draws are taken from the wallet when they land.
   */
  confirmRenewal(asked: string[], renewed: Set<string>, expiresAt: number): void {
    for (const id of asked) {
      const lease = this.open.get(id)
      if (!lease) continue
      if (renewed.has(id)) {
        if (expiresAt > lease.expiresAt) lease.expiresAt = expiresAt
        continue
      }
      logEvent('warn', 'a credit lease was expired by a sweep while in use', { lease_id: id })
      lease.retired = true
      this.open.delete(id)
      this.unlist(lease)
    }
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
      this.unlist(lease)
    }
    lease.lastUsed = this.options.now()
    if (lease.retired && lease.committed === 0n && this.open.has(lease.id)) void this.release(lease, null)
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
    let returned = false
    for (const lease of [...this.open.values()]) {
      if (lease.walletId !== walletId) continue
      lease.retired = true
      this.unlist(lease)
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

  /** Gives back leases nothing drew from for a while (idleMs). */
  async returnIdle(): Promise<void> {
    const idleSince = this.options.now() - this.idleMs
    for (const lease of [...this.open.values()]) {
      if (lease.committed !== 0n || lease.lastUsed > idleSince) continue
      if (this.current.get(lease.key) === lease) this.sizer.forget(lease.key)
      await this.release(lease, null)
    }
  }

  /** Stops drawing and gives back every lease once its calls have ended (waits at most `timeoutMs`). */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true
    clearInterval(this.checkTimer)
    for (const lease of this.open.values()) lease.retired = true
    this.current.clear()
    this.ahead.clear()
    const deadline = this.options.now() + timeoutMs
    for (;;) {
      for (const lease of [...this.open.values()]) if (lease.committed === 0n) void this.release(lease, null)
      if (this.open.size === 0 && this.releasing.size === 0) return
      if (this.options.now() >= deadline) return
      await Promise.race([Promise.allSettled([...this.releasing]), Bun.sleep(50)])
    }
  }

  /** Another instance recalled the wallet's leases: each gives back what it does not need, and none is taken for a while. */
  private async answerRecalls(): Promise<void> {
    const walletIds = [...new Set([...this.open.values()].map((lease) => lease.walletId))]
    for (const walletId of await this.recalls.recalledAmong(walletIds)) await this.returnUnused(walletId)
  }

  /** The lease a call on `key` draws from: the current one while it can cover `amount`, then the one taken ahead. */
  private drawable(key: string, amount: bigint): Lease | undefined {
    const current = this.current.get(key)
    if (current && canServe(current, amount, this.options.now())) return current
    const ahead = this.ahead.get(key)
    if (!ahead) return undefined
    this.ahead.delete(key)
    this.install(ahead)
    return canServe(ahead, amount, this.options.now()) ? ahead : undefined
  }

  /**
   * A busy wallet's next lease is taken while its current one still has half its credit left, so
   * no call waits for a lease's round trip (nor for the charges queued before it) when the
   * current one runs out. A lease taken ahead and never needed goes back when the wallet idles.
   */
  private takeAheadIfLow(lease: Lease, request: HoldRequest): void {
    // A quota key's room is scarce: a second lease there would hold room another instance's call may need.
    if (!runningLow(lease) || lease.quotaMonth !== null) return
    if (this.ahead.has(lease.key) || this.taking.has(lease.key)) return
    this.sizer.observe(lease.key, lease.granted, lease.drawn, this.options.now() - lease.takenAt)
    this.newLease(request, 'ahead').catch(() => {
      // Out of reach: the call that finds the current lease used up takes the next one itself.
    })
  }

  /** A lease draws no more as current or taken ahead. */
  private unlist(lease: Lease): void {
    if (this.current.get(lease.key) === lease) this.current.delete(lease.key)
    if (this.ahead.get(lease.key) === lease) this.ahead.delete(lease.key)
  }

  private drawFrom(lease: Lease, request: HoldRequest): Hold {
    recordDraw(lease, request.amount, this.options.now())
    // The lease waiting behind a busy one is in use too: it is not given back as idle.
    const ahead = this.ahead.get(lease.key)
    if (ahead) ahead.lastUsed = lease.lastUsed
    const hold: Hold = { ...request, id: newId('hold'), month: monthKey(new Date(this.options.now())) }
    this.draws.set(hold.id, lease)
    return hold
  }

  /** Takes a new lease for the request's wallet (current at once, or `ahead` of the current one), or joins the one being taken. */
  private newLease(request: HoldRequest, role: 'current' | 'ahead' = 'current'): Promise<Lease | undefined> {
    const key = leaseKeyOf(request.payer)
    const under = this.taking.get(key)
    if (under) return under
    const taking = this.takeLease(request, role).finally(() => this.taking.delete(key))
    this.taking.set(key, taking)
    return taking
  }

  private async takeLease(request: HoldRequest, role: 'current' | 'ahead'): Promise<Lease | undefined> {
    const { walletId } = request.payer
    const key = leaseKeyOf(request.payer)
    const quota = key !== walletId
    const now = new Date(this.options.now())
    const id = newId('lease')
    // A wallet's lease serves every key of the wallet: it names none. A quota key's is its own.
    const payer: Payer = quota
      ? { ...request.payer, tokensPerMinute: null }
      : { ...request.payer, keyId: null, env: null, monthlyQuota: null, tokensPerMinute: null }
    let granted: bigint
    try {
      granted = await retryingDeadlocks(() =>
        takeLeaseAtomically(this.database, {
          id,
          payer,
          wanted: this.sizer.wanted(key, request.amount),
          minimum: request.amount,
          share: this.share,
          instanceId: this.options.instanceId,
          month: monthKey(now),
          now,
          expiresAt: new Date(now.getTime() + this.options.ttlMs),
          recalledSince: this.recalls.recalledSince(now.getTime()),
        }),
      )
    } catch (error) {
      // Outcome unknown: a lease it may have taken expires by the sweep. An outage fails the call now (503).
      if (isTransientDatabaseError(error)) throw error
      logEvent('warn', 'could not take a credit lease; holding exactly', { error: describeDatabaseError(error) })
      return undefined
    }
    if (granted === 0n) return undefined
    const lease = grantedLease({ id, walletId, key, quotaMonth: quota ? monthKey(now) : null, granted, takenAt: now.getTime(), ttlMs: this.options.ttlMs })
    if (!this.checkTimer && !this.stopped) {
      this.checkTimer = setInterval(() => void this.check(), this.options.checkMs ?? DEFAULT_CHECK_MS)
      // Leases left over are the sweep's: they never keep a process from exiting.
      this.checkTimer.unref()
    }
    this.open.set(id, lease)
    if (role === 'ahead' && this.current.has(key)) this.ahead.set(key, lease)
    else this.install(lease)
    return lease
  }

  /** Makes a lease the one its wallet draws from; the one it replaces draws no more and goes back once its calls end. */
  private install(lease: Lease): void {
    const previous = this.current.get(lease.key)
    this.current.set(lease.key, lease)
    if (!previous || previous === lease) return
    this.sizer.observe(lease.key, previous.granted, previous.drawn, this.options.now() - previous.takenAt)
    previous.retired = true
    if (previous.committed === 0n) void this.release(previous, null)
  }

  /** Gives back `amount` of a lease, or (null) all of it; true when the database took it. */
  private release(lease: Lease, amount: bigint | null): Promise<boolean> {
    const whole = amount === null
    if (whole) {
      // No draw can come in meanwhile: the lease leaves every map before the statement runs.
      this.open.delete(lease.id)
      this.unlist(lease)
    } else lease.amount -= amount
    const releasing = retryingDeadlocks(() => releaseLeaseAtomically(this.database, lease.id, amount, new Date(this.options.now())))
      .then(() => true)
      .catch((error: unknown) => {
        // Whether it landed is unknown: the lease draws no more, and what the database still
        // holds of it goes back with its last release or, failing that, by the sweep.
        lease.retired = true
        this.unlist(lease)
        logEvent('warn', 'could not give back a credit lease; the sweep will', { lease_id: lease.id, error: describeDatabaseError(error) })
        return false
      })
      .finally(() => this.releasing.delete(releasing))
    this.releasing.add(releasing)
    return releasing
  }
}
