import { and, inArray } from 'drizzle-orm'
import type { Database, Queryable } from '../db/database'
import { isTransientDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { holds, ledgerEntries, periodSpend, wallets } from '../db/schema'
import { newId } from '../util/ids'
import type { Hold, HoldRequest } from './hold'
import { creditRefusal, passedQuota } from './hold-refusals'
import { adjustPeriodSpend, adjustWallets, type HoldRow } from './hold-rows'
import { hasQuota, type PeriodKeys } from './periods'

/**
 * The locking path of taking holds: rows locked in the billing lock order (wallets by id, then
 * spend rows), each request decided alone against what is left, so a wallet that cannot cover a
 * whole batch still serves the requests it can, and spend limits by period are checked against
 * what the key or user has committed in each. The hold book takes this path for payers with a
 * quota and for wallet groups the one-statement path refused.
 */

/** When a batch of holds is taken: its time, its periods (for quotas) and when its holds lapse. */
export interface TakeTime {
  now: Date
  periods: PeriodKeys
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

function takeLocked(db: Database, instanceId: string, requests: HoldRequest[], { now, periods, expiresAt }: TakeTime): Promise<(Hold | Error)[]> {
  return db.transaction(async (tx) => {
    const walletIds = [...new Set(requests.map((request) => request.payer.walletId))].sort()
    const rows = await tx
      .select({ id: wallets.id, balance: wallets.balance, held: wallets.held })
      .from(wallets)
      .where(inArray(wallets.id, walletIds))
      .orderBy(wallets.id)
      .for('update')
    const available = new Map(rows.map((row) => [row.id, row.balance - row.held]))
    const committed = await lockQuotas(tx, requests, periods)

    const outcomes: (Hold | Error)[] = []
    const accepted: Hold[] = []
    for (const request of requests) {
      const { walletId, spenderId } = request.payer
      const left = available.get(walletId) ?? 0n
      if (request.amount > left) {
        outcomes.push(creditRefusal(request.amount, left))
        continue
      }
      const spent = (periodKey: string) => committed.get(spendRowId(spenderId, periodKey)) ?? 0n
      const refusal = passedQuota(request.payer, periods, request.amount, spent)
      if (refusal) {
        outcomes.push(refusal)
        continue
      }
      available.set(walletId, left - request.amount)
      for (const periodKey of Object.values(periods)) committed.set(spendRowId(spenderId, periodKey), spent(periodKey) + request.amount)
      const hold: Hold = { ...request, id: newId('hold'), periods }
      accepted.push(hold)
      outcomes.push(hold)
    }
    if (accepted.length === 0) return outcomes

    const rowsOf = accepted.map((hold): HoldRow => ({ ...hold, walletId: hold.payer.walletId, spenderId: hold.payer.spenderId }))
    await adjustWallets(tx, rowsOf, (hold) => ({ held: hold.amount, balance: 0n }))
    await adjustPeriodSpend(tx, rowsOf, (hold) => ({ held: hold.amount, charged: 0n }))
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
        month: hold.periods.month,
        week: hold.periods.week,
        day: hold.periods.day,
        createdAt: now,
        expiresAt,
      })),
    )
    await tx.insert(ledgerEntries).values(accepted.map((hold) => ledgerFields(hold, 'hold', hold.amount, now)))
    return outcomes
  })
}

/** A spend row's place in the map of what is committed: its spender and period key. */
function spendRowId(spenderId: string | null, periodKey: string): string {
  return `${spenderId ?? ''}\n${periodKey}`
}

/** Locks the spend rows of the periods of payers with a quota and returns what each row has committed (by spendRowId). */
async function lockQuotas(tx: Queryable, requests: HoldRequest[], periods: PeriodKeys): Promise<Map<string, bigint>> {
  const spenderIds = [...new Set(requests.filter((request) => hasQuota(request.payer.quotas)).flatMap((request) => request.payer.spenderId ?? []))].sort()
  const committed = new Map<string, bigint>()
  if (spenderIds.length === 0) return committed
  const periodKeys = Object.values(periods).sort()
  await tx
    .insert(periodSpend)
    .values(spenderIds.flatMap((spenderId) => periodKeys.map((period) => ({ spenderId, period }))))
    .onConflictDoNothing()
  const rows = await tx
    .select()
    .from(periodSpend)
    .where(and(inArray(periodSpend.spenderId, spenderIds), inArray(periodSpend.period, periodKeys)))
    .orderBy(periodSpend.spenderId, periodSpend.period)
    .for('update')
  for (const row of rows) committed.set(spendRowId(row.spenderId, row.period), row.charged + row.held)
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
