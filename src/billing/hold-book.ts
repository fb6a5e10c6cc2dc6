import { and, eq, inArray } from 'drizzle-orm'
import type { Database, DatabaseHandle, Queryable } from '../db/client'
import { holds, keySpend, ledgerEntries, wallets } from '../db/schema'
import { InsufficientBalanceError, QuotaExceededError } from '../errors/kinds'
import { newId } from '../util/ids'
import { retryingDeadlocks } from '../db/rows'
import { Batcher } from './batcher'
import { closeHoldsAtomically, takeHoldsAtomically } from './hold-statements'
import { adjustKeySpend, adjustWallets, monthKey, type HoldRow } from './hold-rows'
import type { Payer } from './payer'

export interface HoldRequest {
  payer: Payer
  /** Micro-credits: the worst case of the call. */
  amount: bigint
  requestId: string
  model: string
  route: string
}

export interface Hold extends HoldRequest {
  id: string
  month: string
}

export interface Closing {
  hold: Hold
  /** What the call cost by the provider's usage (0 for a release); may exceed the hold. */
  cost: bigint
  usage: Record<string, unknown> | null
  model: string
  route: string
}

export interface ClosedHold {
  /** Taken from the payer: the cost, capped at the hold. */
  charged: bigint
  /** Cost beyond the hold, recorded and not taken. */
  uncollected: bigint
}

export interface HoldBookOptions {
  /** This process, so that its open holds stay alive while it runs (see sweeper.ts). */
  instanceId: string
  /** How long a hold outlives its last heartbeat. */
  ttlMs: number
  now: () => number
}

/**
 * Holds before a call, settlement or release after it (CONTRACT.md §5). Every change is a
 * conditional update under row locks in the database, so no number of processes can take a
 * payer below zero; many calls share one transaction (group commit) to keep a busy wallet fast.
 */
export class HoldBook {
  private readonly takes: Batcher<HoldRequest, Hold>
  private readonly closings: Batcher<Closing, ClosedHold>

  private readonly db: Database

  constructor(
    private readonly database: Pick<DatabaseHandle, 'db' | 'rows'>,
    private readonly options: HoldBookOptions,
  ) {
    this.db = database.db
    this.takes = new Batcher((requests) => this.takeBatch(requests))
    this.closings = new Batcher((items) => this.closeBatch(items))
  }

  /** Reserves the worst case, or fails with 402 insufficient_balance / 403 api_key_quota_exceeded. */
  take(request: HoldRequest): Promise<Hold> {
    return this.takes.submit(request)
  }

  settle(hold: Hold, cost: bigint, usage: Record<string, unknown> | null, model = hold.model, route = hold.route): Promise<ClosedHold> {
    return this.closings.submit({ hold, cost, usage, model, route })
  }

  release(hold: Hold): Promise<ClosedHold> {
    return this.closings.submit({ hold, cost: 0n, usage: null, model: hold.model, route: hold.route })
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
    const outcomes: (Hold | Error)[] = new Array(requests.length)
    const slow: number[] = []
    const groups = new Map<string, number[]>()
    requests.forEach((request, index) => {
      if (request.payer.monthlyQuota !== null) return slow.push(index)
      const group = groups.get(request.payer.walletId) ?? []
      group.push(index)
      groups.set(request.payer.walletId, group)
    })
    await Promise.all(
      [...groups].map(async ([walletId, indexes]) => {
        const group = indexes.map((index): Hold => ({ ...requests[index]!, id: newId('hold'), month }))
        const taken = await retryingDeadlocks(() => takeHoldsAtomically(this.database, walletId, group, this.options.instanceId, now, expiresAt))
        if (!taken) return slow.push(...indexes)
        indexes.forEach((index, position) => (outcomes[index] = group[position]!))
      }),
    )
    if (slow.length > 0) {
      slow.sort((a, b) => a - b)
      const decided = await retryingDeadlocks(() => this.takeLocked(slow.map((index) => requests[index]!), now, month, expiresAt))
      slow.forEach((index, position) => (outcomes[index] = decided[position]!))
    }
    return outcomes
  }

  private takeLocked(requests: HoldRequest[], now: Date, month: string, expiresAt: Date): Promise<(Hold | Error)[]> {
    return this.db.transaction(async (tx) => {
      const walletIds = [...new Set(requests.map((request) => request.payer.walletId))].sort()
      const rows = await tx
        .select({ id: wallets.id, balance: wallets.balance, held: wallets.held })
        .from(wallets)
        .where(inArray(wallets.id, walletIds))
        .orderBy(wallets.id)
        .for('update')
      const available = new Map(rows.map((row) => [row.id, row.balance - row.held]))
      const committed = await this.lockQuotas(tx, requests, month)

      const outcomes: (Hold | Error)[] = []
      const accepted: Hold[] = []
      for (const request of requests) {
        const { walletId, keyId, monthlyQuota } = request.payer
        const left = available.get(walletId) ?? 0n
        if (request.amount > left) {
          outcomes.push(new InsufficientBalanceError('Not enough credit for the worst case of this request.'))
          continue
        }
        if (keyId && monthlyQuota !== null && (committed.get(keyId) ?? 0n) + request.amount > monthlyQuota) {
          outcomes.push(new QuotaExceededError("This request would pass the API key's monthly quota."))
          continue
        }
        available.set(walletId, left - request.amount)
        if (keyId) committed.set(keyId, (committed.get(keyId) ?? 0n) + request.amount)
        const hold: Hold = { ...request, id: newId('hold'), month }
        accepted.push(hold)
        outcomes.push(hold)
      }
      if (accepted.length === 0) return outcomes

      const rowsOf = accepted.map((hold): HoldRow => ({ ...hold, walletId: hold.payer.walletId, keyId: hold.payer.keyId }))
      await adjustWallets(tx, rowsOf, (hold) => ({ held: hold.amount, balance: 0n }))
      await adjustKeySpend(tx, rowsOf, (hold) => [{ month: hold.month, held: hold.amount, charged: 0n }])
      await tx.insert(holds).values(
        accepted.map((hold) => ({
          id: hold.id,
          requestId: hold.requestId,
          walletId: hold.payer.walletId,
          payerType: hold.payer.type,
          accountId: hold.payer.accountId,
          keyId: hold.payer.keyId,
          userId: hold.payer.type === 'user_allotment' ? hold.payer.ownerId : null,
          userSub: hold.payer.userSub,
          env: hold.payer.env,
          amount: hold.amount,
          model: hold.model,
          route: hold.route,
          instanceId: this.options.instanceId,
          month: hold.month,
          createdAt: now,
          expiresAt,
        })),
      )
      await tx.insert(ledgerEntries).values(accepted.map((hold) => ledgerFields(hold, 'hold', hold.amount, now)))
      return outcomes
    })
  }

  /** Locks the month rows of keys with a quota and returns what each has committed this month. */
  private async lockQuotas(tx: Queryable, requests: HoldRequest[], month: string): Promise<Map<string, bigint>> {
    const keyIds = [...new Set(requests.filter((request) => request.payer.monthlyQuota !== null).flatMap((request) => request.payer.keyId ?? []))].sort()
    const committed = new Map<string, bigint>()
    if (keyIds.length === 0) return committed
    await tx.insert(keySpend).values(keyIds.map((keyId) => ({ keyId, month }))).onConflictDoNothing()
    const rows = await tx
      .select()
      .from(keySpend)
      .where(and(inArray(keySpend.keyId, keyIds), eq(keySpend.month, month)))
      .orderBy(keySpend.keyId)
      .for('update')
    for (const row of rows) committed.set(row.keyId, row.charged + row.held)
    return committed
  }

  private async closeBatch(items: Closing[]): Promise<(ClosedHold | Error)[]> {
    const now = new Date(this.options.now())
    const closedIds = await retryingDeadlocks(() => closeHoldsAtomically(this.database, items, now, monthKey(now)))
    // A hold a sweep already expired gave its money back: the cost is recorded, uncollected.
    const lapsed = items.filter((item) => !closedIds.has(item.hold.id) && item.cost > 0n)
    if (lapsed.length > 0) {
      await this.db.insert(ledgerEntries).values(
        lapsed.map((item) => ({ ...ledgerFields({ ...item.hold, model: item.model, route: item.route }, 'charge', 0n, now), usage: item.usage, uncollected: item.cost })),
      )
    }
    return items.map((item): ClosedHold => {
      if (!closedIds.has(item.hold.id)) return { charged: 0n, uncollected: item.cost }
      const charged = item.cost < item.hold.amount ? item.cost : item.hold.amount
      return { charged, uncollected: item.cost - charged }
    })
  }
}

export function ledgerFields(hold: Hold, kind: 'hold' | 'charge' | 'release' | 'expire', amount: bigint, now: Date) {
  return {
    kind,
    amount,
    walletId: hold.payer.walletId,
    payerType: hold.payer.type,
    accountId: hold.payer.accountId,
    keyId: hold.payer.keyId,
    userSub: hold.payer.userSub,
    env: hold.payer.env,
    requestId: hold.requestId,
    holdId: hold.id,
    model: hold.model,
    route: hold.route,
    createdAt: now,
  }
}
