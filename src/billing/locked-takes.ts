import { and, eq, inArray } from 'drizzle-orm'
import type { Database, Queryable } from '../db/database'
import { isTransientDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { holds, keySpend, ledgerEntries, wallets } from '../db/schema'
import { InsufficientBalanceError, QuotaExceededError } from '../errors/kinds'
import { newId } from '../util/ids'
import type { Hold, HoldRequest } from './hold'
import { adjustKeySpend, adjustWallets, type HoldRow } from './hold-rows'

/**
 * The locking path of taking holds: rows locked in the billing lock order (wallets by id, then
 * key months), each request decided alone against what is left, so a wallet that cannot cover a
 * whole batch still serves the requests it can, and monthly quotas are checked against what the
 * key has committed. The hold book takes this path for keys with a quota and for wallet groups the
 * one-statement path refused.
 */

/** When a batch of holds is taken: its time, its month (for quotas) and when its holds lapse. */
export interface TakeTime {
  now: Date
  month: string
  expiresAt: Date
}

/** The locking path for many requests; when the transaction fails on a member's data, each request alone. */
export async function takeLockedIsolated(db: Database, instanceId: string, requests: HoldRequest[], when: TakeTime): Promise<(Hold | Error)[]> {
  try {
    return await retryingDeadlocks(() => takeLocked(db, instanceId, requests, when))
  } catch (error) {
    if (requests.length === 1 || isTransientDatabaseError(error)) return requests.map(() => asError(error))
    const outcomes: (Hold | Error)[] = []
    for (const request of requests) {
      try {
        outcomes.push(...(await retryingDeadlocks(() => takeLocked(db, instanceId, [request], when))))
      } catch (alone) {
        outcomes.push(asError(alone))
      }
    }
    return outcomes
  }
}

function takeLocked(db: Database, instanceId: string, requests: HoldRequest[], { now, month, expiresAt }: TakeTime): Promise<(Hold | Error)[]> {
  return db.transaction(async (tx) => {
    const walletIds = [...new Set(requests.map((request) => request.payer.walletId))].sort()
    const rows = await tx
      .select({ id: wallets.id, balance: wallets.balance, held: wallets.held })
      .from(wallets)
      .where(inArray(wallets.id, walletIds))
      .orderBy(wallets.id)
      .for('update')
    const available = new Map(rows.map((row) => [row.id, row.balance - row.held]))
    const committed = await lockQuotas(tx, requests, month)

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
        sessionId: hold.sessionId ?? null,
        walletId: hold.payer.walletId,
        payerType: hold.payer.type,
        accountId: hold.payer.accountId,
        keyId: hold.payer.keyId,
        userId: hold.payer.type === 'user_allotment' ? hold.payer.ownerId : null,
        userSub: hold.payer.userSub,
        env: hold.payer.env,
        amount: hold.amount,
        model: hold.model,
        provider: hold.provider,
        instanceId,
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
async function lockQuotas(tx: Queryable, requests: HoldRequest[], month: string): Promise<Map<string, bigint>> {
  const keyIds = [...new Set(requests.filter((request) => request.payer.monthlyQuota !== null).flatMap((request) => request.payer.keyId ?? []))].sort()
  const committed = new Map<string, bigint>()
  if (keyIds.length === 0) return committed
  await tx
    .insert(keySpend)
    .values(keyIds.map((keyId) => ({ keyId, month })))
    .onConflictDoNothing()
  const rows = await tx
    .select()
    .from(keySpend)
    .where(and(inArray(keySpend.keyId, keyIds), eq(keySpend.month, month)))
    .orderBy(keySpend.keyId)
    .for('update')
  for (const row of rows) committed.set(row.keyId, row.charged + row.held)
  return committed
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

function ledgerFields(hold: Hold, kind: 'hold' | 'charge' | 'release' | 'expire', amount: bigint, now: Date) {
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
    sessionId: hold.sessionId ?? null,
    holdId: hold.id,
    model: hold.model,
    provider: hold.provider,
    createdAt: now,
  }
}
