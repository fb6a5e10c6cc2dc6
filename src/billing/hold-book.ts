import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Database, Queryable } from '../db/client'
import { holds, keySpend, ledgerEntries, wallets } from '../db/schema'
import { InsufficientBalanceError, QuotaExceededError } from '../errors/kinds'
import { newId } from '../util/ids'
import { Batcher } from './batcher'
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

  constructor(
    private readonly db: Database,
    private readonly options: HoldBookOptions,
  ) {
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

  private takeBatch(requests: HoldRequest[]): Promise<(Hold | Error)[]> {
    const now = new Date(this.options.now())
    const month = monthKey(now)
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
          expiresAt: new Date(now.getTime() + this.options.ttlMs),
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

  private closeBatch(items: Closing[]): Promise<(ClosedHold | Error)[]> {
    const now = new Date(this.options.now())
    const month = monthKey(now)
    return this.db.transaction(async (tx) => {
      // Only holds still open are closed: a hold the sweeper expired has already been given back.
      const stillOpen = new Set(
        (
          await tx
            .update(holds)
            .set({ status: sql`case when ${holds.id} in ${settledIds(items)} then 'settled' else 'released' end`, closedAt: now })
            .where(and(inArray(holds.id, items.map((item) => item.hold.id)), eq(holds.status, 'open')))
            .returning({ id: holds.id })
        ).map((row) => row.id),
      )
      const closed = items.map((item): ClosedHold => {
        if (!stillOpen.has(item.hold.id)) return { charged: 0n, uncollected: item.cost }
        const charged = item.cost < item.hold.amount ? item.cost : item.hold.amount
        return { charged, uncollected: item.cost - charged }
      })
      const open = items.map((item, index) => ({ item, result: closed[index]! })).filter(({ item }) => stillOpen.has(item.hold.id))
      const rows = open.map(({ item, result }): HoldRow & { charged: bigint } => ({
        ...item.hold,
        walletId: item.hold.payer.walletId,
        keyId: item.hold.payer.keyId,
        charged: result.charged,
      }))
      await adjustWallets(tx, rows, (row) => ({ held: -row.amount, balance: -row.charged }))
      await adjustKeySpend(tx, rows, (row) => [
        { month: row.month, held: -row.amount, charged: 0n },
        { month, held: 0n, charged: row.charged },
      ])
      const entries = items.flatMap((item, index) => {
        const result = closed[index]!
        const hold = { ...item.hold, model: item.model, route: item.route }
        const released = stillOpen.has(item.hold.id) ? item.hold.amount - result.charged : 0n
        return [
          ...(item.cost > 0n || item.usage ? [{ ...ledgerFields(hold, 'charge', result.charged, now), usage: item.usage, uncollected: result.uncollected }] : []),
          ...(released > 0n ? [ledgerFields(hold, 'release', released, now)] : []),
        ]
      })
      if (entries.length > 0) await tx.insert(ledgerEntries).values(entries)
      return closed
    })
  }
}

function settledIds(items: Closing[]) {
  const ids = items.filter((item) => item.cost > 0n || item.usage).map((item) => item.hold.id)
  return sql`(${sql.join(ids.length > 0 ? ids.map((id) => sql`${id}`) : [sql`null`], sql`, `)})`
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
