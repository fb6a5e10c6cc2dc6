import type { DatabaseHandle } from '../db/client'
import type { Database } from '../db/database'
import { describeDatabaseError, isTransientDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { InvalidRequestError } from '../errors/kinds'
import { logEvent } from '../observability/log'
import { timedBatch } from '../observability/metrics'
import { newId } from '../util/ids'
import { Batcher } from './batcher'
import { boundedCost, type ClosedHold, type Closing, chargeOf, closedLocally } from './closing'
import type { CreditLeases } from './credit-lease'
import type { Hold, HoldRequest } from './hold'
import { monthKey } from './hold-rows'
import { chargedAlready, closeHoldsAtomically, takeHoldsAtomically } from './hold-statements'
import { chargeLapsedCallsAtomically } from './lapsed-charges'
import { isLeaseableRefusal } from './lease-keys'
import { chargeLeasesAtomically } from './lease-statements'
import { asError, takeLockedIsolated } from './locked-takes'
import { MAX_HOLD_MICROS } from './money'

export interface HoldBookOptions {
  /** This process, recorded on its holds. */
  instanceId: string
  /** How long a hold outlives its last heartbeat. */
  ttlMs: number
  now: () => number
  /** How long a client waits for its settlement to land before it is answered from the local figures (default 2 s). */
  closingAnswerMs?: number
  /** Backoff between attempts of a closing that failed (default 250 ms doubling to 4 s, so it lands soon after an outage ends). */
  retryDelayMs?: (attempt: number) => number
  /** When set, calls draw their holds from credit leases (credit-lease.ts). */
  leases?: CreditLeases
  /**
   * How long a charge drawn from a lease waits for others before they are written together
   * (default 0). Nobody waits on those writes; on a database that runs one statement at a time
   * it is what keeps one statement per call from being the whole cost.
   */
  leaseChargeGatherMs?: number
}

/** A closing that keeps failing on its own data (not an outage) is given up after this many attempts: the sweep expires its hold. */
const MAX_ATTEMPTS_WITHOUT_OUTAGE = 5
/** A hold whose closing is pending is still renewed this long, so an outage shorter than this settles it rather than expiring it. */
const PENDING_RENEWAL_MS = 10 * 60_000

const defaultRetryDelay = (attempt: number) => Math.min(4_000, 250 * 2 ** (attempt - 1))

/**
 * Holds before a call, settlement or release after it (docs/billing.md#hold-settle-release). Every change is a
 * conditional update under row locks in the database, so no number of processes can take a
 * payer below zero; many calls share one transaction (group commit) to keep a busy wallet fast.
 *
 * Only holds this process knows to be alive are renewed (see sweeper.ts): an open call's hold
 * while the call runs, and a hold whose closing is still being retried for a bounded time. A
 * hold whose take failed halfway (the commit's outcome unknown), or whose closing was given
 * up, is left to expire, so no hold outlives its request by more than the TTL.
 */
export class HoldBook {
  private readonly takes: Batcher<HoldRequest, Hold>
  private readonly closings: Batcher<Closing, ClosedHold>
  /** Charges of holds drawn from leases: a batcher of their own, so a failure of one kind never rewrites the other. */
  private readonly leaseCharges: Batcher<Closing, ClosedHold>
  /** Hold id -> renew until (ms): open calls forever, pending closings for a while. */
  private readonly renewing = new Map<string, number>()
  /** Closings not yet landed in the database. */
  private readonly pending = new Set<Promise<unknown>>()

  private readonly db: Database

  constructor(
    private readonly database: Pick<DatabaseHandle, 'db' | 'rows'>,
    private readonly options: HoldBookOptions,
  ) {
    this.db = database.db
    this.takes = new Batcher((requests) => timedBatch('hold', requests.length, () => this.takeBatch(requests)))
    this.closings = new Batcher((items) => timedBatch('settle', items.length, () => this.closeBatch(items)))
    this.leaseCharges = new Batcher(
      (items) => timedBatch('settle', items.length, () => this.chargeLeaseBatch(items)),
      undefined,
      undefined,
      options.leaseChargeGatherMs,
    )
  }

  /** Reserves the worst case, or fails with 402 insufficient_balance / 403 api_key_quota_exceeded. */
  async take(request: HoldRequest): Promise<Hold> {
    if (request.amount < 0n || request.amount > MAX_HOLD_MICROS) {
      throw new InvalidRequestError(
        `The worst case of this request exceeds the largest amount the gateway reserves for one call (${MAX_HOLD_MICROS / 1_000_000n} credits).`,
      )
    }
    const leases = this.options.leases
    const drawn = await leases?.draw(request)
    if (drawn) return drawn
    let hold: Hold
    try {
      hold = await this.takes.submit(request)
    } catch (error) {
      // Credit or quota room that leases keep unused must not refuse a call a lease-less gateway would take.
      if (!(isLeaseableRefusal(error) && leases)) throw error
      hold = await leases.retryRefused(request, () => this.takes.submit(request), error)
    }
    this.renewing.set(hold.id, Number.POSITIVE_INFINITY)
    return hold
  }

  /**
   * Charges `cost` (capped at the hold) and releases the rest. Never fails: when the database
   * cannot take the closing now, it is retried in the background until it lands, and the
   * caller is answered from the same arithmetic the database will do.
   */
  settle(hold: Hold, cost: bigint, usage: Record<string, unknown> | null, model = hold.model, provider = hold.provider): Promise<ClosedHold> {
    return this.close({ hold, cost, usage, model, provider })
  }

  release(hold: Hold): Promise<ClosedHold> {
    return this.close({ hold, cost: 0n, usage: null, model: hold.model, provider: hold.provider })
  }

  /** The holds the heartbeat extends: open calls, pending closings within their renewal window, and credit leases. */
  liveHoldIds(): string[] {
    const now = this.options.now()
    const ids: string[] = this.options.leases?.liveLeaseIds() ?? []
    for (const [id, until] of this.renewing) {
      if (until >= now) ids.push(id)
      else this.renewing.delete(id)
    }
    return ids
  }

  /** Holds taken by this process whose call has not begun closing (settle or release): the calls open now. */
  openHoldCount(): number {
    let open = this.options.leases?.openDrawCount() ?? 0
    for (const until of this.renewing.values()) if (until === Number.POSITIVE_INFINITY) open++
    return open
  }

  /** Closings (settlements and releases) not yet written to the database. */
  pendingClosingCount(): number {
    return this.pending.size
  }

  /**
   * Waits (at most `timeoutMs`) for the closings not yet written when it is called, not for
   * those that come after: what a caller reads next includes every charge this process had
   * answered before (a busy gateway always has charges in flight, so waiting for none would never end).
   */
  async caughtUp(timeoutMs: number): Promise<void> {
    if (this.pending.size === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs)
    })
    await Promise.race([Promise.allSettled([...this.pending]), deadline])
    clearTimeout(timer)
  }

  /** Waits (at most `timeoutMs`) for every closing not yet written; true when none is left. */
  async landPending(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (this.pending.size > 0 && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.pending]), Bun.sleep(Math.max(0, deadline - Date.now()))])
    }
    return this.pending.size === 0
  }

  /** For a stopping process: lets every closing land (at most `timeoutMs`), then gives back the credit leases. */
  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    const landed = await this.landPending(timeoutMs)
    await this.options.leases?.stop(Math.max(0, deadline - Date.now()))
    return landed
  }

  private async close(requested: Closing): Promise<ClosedHold> {
    const closing = { ...requested, cost: boundedCost(requested) }
    const { id } = closing.hold
    const leases = this.options.leases
    const leased = leases?.leaseOf(closing.hold) !== undefined
    // A drawn hold that is released never reached the database: it goes back to its lease.
    if (leased && closing.cost === 0n && closing.usage === null) {
      leases?.finished(closing.hold, 0n, true)
      return { charged: 0n, uncollected: 0n }
    }
    // A drawn hold has no row of its own to renew: its lease is renewed while it has draws.
    if (!leased) this.renewing.set(id, this.options.now() + PENDING_RENEWAL_MS)
    const landing = this.land(closing, leased ? this.leaseCharges : this.closings)
      .then((closed) => {
        if (leased) leases?.finished(closing.hold, closed?.charged ?? 0n, closed !== undefined && !closed.lapsed)
        return closed
      })
      .finally(() => {
        this.renewing.delete(id)
        this.pending.delete(landing)
      })
    this.pending.add(landing)
    // A charge drawn from a lease is answered at once, from the arithmetic the database will do,
    // and lands batched with others a few milliseconds later: no commit on the call's path. What
    // a crash can lose this way is bounded by the lease (docs/billing.md#credit-lease).
    if (leased) return closedLocally(closing)
    let timer: ReturnType<typeof setTimeout> | undefined
    const answerBy = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.options.closingAnswerMs ?? 2_000)
    })
    const landed = await Promise.race([landing, answerBy])
    clearTimeout(timer)
    return landed ?? closedLocally(closing)
  }

  /** Writes a closing, retrying with backoff until it lands; undefined when it was given up. */
  private async land(closing: Closing, batcher: Batcher<Closing, ClosedHold>): Promise<ClosedHold | undefined> {
    const delay = this.options.retryDelayMs ?? defaultRetryDelay
    let failures = 0
    for (let attempt = 1; ; attempt++) {
      try {
        const closed = await batcher.submit(attempt > 1 ? { ...closing, retried: true } : closing)
        if (attempt > 1) logEvent('info', 'hold closing landed after retries', { hold_id: closing.hold.id, attempts: attempt })
        return closed
      } catch (error) {
        const outage = isTransientDatabaseError(error)
        if (!outage) failures++
        if (attempt === 1 || failures >= MAX_ATTEMPTS_WITHOUT_OUTAGE) {
          logEvent(
            failures >= MAX_ATTEMPTS_WITHOUT_OUTAGE ? 'error' : 'warn',
            failures >= MAX_ATTEMPTS_WITHOUT_OUTAGE ? 'hold closing given up; the sweep will expire the hold' : 'hold closing failed; retrying',
            {
              hold_id: closing.hold.id,
              request_id: closing.hold.requestId,
              error: describeDatabaseError(error),
            },
          )
        }
        if (failures >= MAX_ATTEMPTS_WITHOUT_OUTAGE) return undefined
        await Bun.sleep(delay(attempt))
      }
    }
  }

  /**
   * Without quotas in play, each wallet's holds go in one statement, all or none; a wallet that
   * cannot cover its whole group, and any key with a monthly quota, take the locking path,
   * which decides request by request.
   */
  private async takeBatch(requests: HoldRequest[]): Promise<(Hold | Error)[]> {
    const now = new Date(this.options.now())
    const month = monthKey(now)
    const expiresAt = new Date(now.getTime() + this.options.ttlMs)
    const outcomes = new Map<HoldRequest, Hold | Error>()
    const slow: HoldRequest[] = []
    const groups = new Map<string, HoldRequest[]>()
    for (const request of requests) {
      if (request.payer.monthlyQuota !== null) {
        slow.push(request)
        continue
      }
      const group = groups.get(request.payer.walletId) ?? []
      group.push(request)
      groups.set(request.payer.walletId, group)
    }
    // Each group commits on its own, so a failure is recorded per group and never thrown: the
    // batcher would otherwise write the groups that did commit a second time.
    await Promise.all(
      [...groups].map(async ([walletId, members]) => {
        const held = members.map((request) => ({ request, hold: { ...request, id: newId('hold'), month } satisfies Hold }))
        try {
          const taken = await retryingDeadlocks(() =>
            takeHoldsAtomically(
              this.database,
              walletId,
              held.map(({ hold }) => hold),
              this.options.instanceId,
              now,
              expiresAt,
            ),
          )
          if (!taken) return slow.push(...members)
          for (const { request, hold } of held) outcomes.set(request, hold)
        } catch (error) {
          // A member the database refused: the locking path decides each one alone.
          if (isTransientDatabaseError(error)) for (const request of members) outcomes.set(request, asError(error))
          else slow.push(...members)
        }
      }),
    )
    if (slow.length > 0) {
      // In arrival order, as the locking path expects.
      const waiting = new Set(slow)
      const ordered = requests.filter((request) => waiting.has(request))
      const decided = await takeLockedIsolated(this.db, this.options.instanceId, ordered, { now, month, expiresAt })
      ordered.forEach((request, position) => outcomes.set(request, decided[position] ?? new Error('the locking path decided no outcome for this hold')))
    }
    return requests.map((request) => outcomes.get(request) ?? new Error('no outcome was decided for this hold'))
  }

  private async closeBatch(items: Closing[]): Promise<(ClosedHold | Error)[]> {
    const now = new Date(this.options.now())
    const closedIds = await retryingDeadlocks(() => closeHoldsAtomically(this.database, items, now, monthKey(now)))
    const landedBefore = await this.landedBefore(items.filter((item) => !closedIds.has(item.hold.id)))
    return this.chargeLapsed(items, (item) => closedIds.has(item.hold.id) || landedBefore.has(item.hold.requestId), now)
  }

  /** Charges calls drawn from leases; a call whose lease had expired meanwhile is charged as a lapsed hold. */
  private async chargeLeaseBatch(items: Closing[]): Promise<(ClosedHold | Error)[]> {
    const now = new Date(this.options.now())
    const leaseOf = (item: Closing) => this.options.leases?.leaseOf(item.hold) ?? ''
    const charges = items.map((item) => ({ ...chargeOf(item), leaseId: leaseOf(item), retried: item.retried === true }))
    const charged = await retryingDeadlocks(() => chargeLeasesAtomically(this.database, charges, now, monthKey(now)))
    const landedBefore = await this.landedBefore(items.filter((item) => !charged.has(leaseOf(item))))
    return this.chargeLapsed(items, (item) => charged.has(leaseOf(item)) || landedBefore.has(item.hold.requestId), now)
  }

  /**
   * The outcome of a batch whose `landed` closings are committed. The others found their hold
   * (or lease) expired by a sweep, which gave its amount back: they are charged from the payer's
   * available credit now, and only what that cannot cover is uncollected
   * (docs/billing.md#database-outages). A failure here fails only those, whose retry finds their
   * hold gone again and comes back here (the batcher would write the landed ones twice).
   */
  private async chargeLapsed(items: Closing[], landed: (item: Closing) => boolean, now: Date): Promise<(ClosedHold | Error)[]> {
    const lapsed = items.filter((item) => !landed(item) && item.cost > 0n)
    let collected: bigint[] = []
    if (lapsed.length > 0) {
      try {
        collected = await retryingDeadlocks(() => chargeLapsedCallsAtomically(this.database, lapsed.map(chargeOf), now, monthKey(now)))
      } catch (error) {
        return items.map((item) => (landed(item) ? closedLocally(item) : asError(error)))
      }
      logEvent('warn', 'charges of expired holds taken from their payers', { calls: lapsed.length })
    }
    const taken = new Map(lapsed.map((item, index) => [item, collected[index] ?? 0n]))
    return items.map((item): ClosedHold => {
      if (landed(item)) return closedLocally(item)
      const late = taken.get(item) ?? 0n
      return { charged: late, uncollected: item.cost - late, lapsed: true }
    })
  }

  /**
   * Closings whose charge is already on the ledger: an earlier attempt committed and its answer
   * was lost (docs/billing.md#database-outages). By request id. A failure here fails the
   * attempt; on the retry, the closings this one did commit are found the same way.
   */
  private async landedBefore(missing: Closing[]): Promise<Set<string>> {
    if (missing.length === 0) return new Set()
    return chargedAlready(
      this.database,
      missing.map((item) => item.hold.requestId),
    )
  }
}
