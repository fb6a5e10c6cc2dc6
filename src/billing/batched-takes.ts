import type { DatabaseHandle } from '../db/client'
import { isTransientDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { newId } from '../util/ids'
import type { Hold, HoldRequest } from './hold'
import { takeHoldsAtomically } from './hold-statements'
import { asError, takeLockedIsolated } from './locked-takes'
import { hasQuota, periodKeys } from './periods'

/** Who takes a batch of exact holds, and when: `ttlMs` after `now`, a hold lapses unless renewed. */
export interface BatchTaker {
  instanceId: string
  ttlMs: number
  now: Date
}

/**
 * One batch of exact holds (docs/billing.md#holds). Without quotas in play, each wallet's holds
 * go in one statement, all or none; a wallet that cannot cover its whole group, and any key or
 * user with a spend limit, take the locking path (locked-takes.ts), which decides request by request.
 * One outcome per request, in order.
 */
export async function takeHoldBatch(database: Pick<DatabaseHandle, 'db' | 'rows'>, taker: BatchTaker, requests: HoldRequest[]): Promise<(Hold | Error)[]> {
  const { now } = taker
  const periods = periodKeys(now)
  const expiresAt = new Date(now.getTime() + taker.ttlMs)
  const outcomes = new Map<HoldRequest, Hold | Error>()
  const slow: HoldRequest[] = []
  const groups = new Map<string, HoldRequest[]>()
  for (const request of requests) {
    if (hasQuota(request.payer.quotas)) {
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
      const held = members.map((request) => ({ request, hold: { ...request, id: newId('hold'), periods } satisfies Hold }))
      try {
        const taken = await retryingDeadlocks(() =>
          takeHoldsAtomically(
            database,
            walletId,
            held.map(({ hold }) => hold),
            taker.instanceId,
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
    const decided = await takeLockedIsolated(database.db, taker.instanceId, ordered, { now, periods, expiresAt })
    ordered.forEach((request, position) => outcomes.set(request, decided[position] ?? new Error('the locking path decided no outcome for this hold')))
  }
  return requests.map((request) => outcomes.get(request) ?? new Error('no outcome was decided for this hold'))
}
