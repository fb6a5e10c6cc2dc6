import type { DatabaseHandle } from '../db/client'
import { retryingDeadlocks } from '../db/rows'
import { logEvent } from '../observability/log'
import { type ClosedHold, type Closing, chargeOf, closedLocally } from './closing'
import { chargedAlready } from './hold-statements'
import { chargeLapsedCallsAtomically } from './lapsed-charges'
import { asError } from './locked-takes'

/**
 * The outcome of each closing of a batch whose statement committed those it names
 * (`committed`), for exact holds and for charges drawn from credit leases alike. A closing not
 * among them was either committed by an earlier attempt whose answer was lost, or found its hold
 * (or lease) expired by a sweep: the latter is charged from its payer's available credit now
 * (docs/billing.md#database-outages).
 */
export async function closingOutcomes<C extends Closing>(
  database: Pick<DatabaseHandle, 'rows'>,
  items: C[],
  committed: (item: C) => boolean,
  now: Date,
): Promise<(ClosedHold | Error)[]> {
  const before = await landedBefore(
    database,
    items.filter((item) => !committed(item)),
  )
  return chargeLapsed(database, items, (item) => committed(item) || before.has(item.hold.requestId), now)
}

/**
 * Closings whose charge is already on the ledger: an earlier attempt committed and its answer
 * was lost (docs/billing.md#database-outages). By request id. A failure here fails the
 * attempt; on the retry, the closings this one did commit are found the same way.
 */
async function landedBefore(database: Pick<DatabaseHandle, 'rows'>, missing: Closing[]): Promise<Set<string>> {
  if (missing.length === 0) return new Set()
  return chargedAlready(
    database,
    missing.map((item) => item.hold.requestId),
  )
}

/**
 * The outcome of a batch whose `landed` closings are committed. The others found their hold
 * (or lease) expired by a sweep, which gave its amount back: they are charged from the payer's
 * available credit now, and only what that cannot cover is uncollected
 * (docs/billing.md#database-outages). A failure here fails only those, whose retry finds their
 * hold gone again and comes back here (the batcher would write the landed ones twice).
 */
async function chargeLapsed<C extends Closing>(
  database: Pick<DatabaseHandle, 'rows'>,
  items: C[],
  landed: (item: C) => boolean,
  now: Date,
): Promise<(ClosedHold | Error)[]> {
  const lapsed = items.filter((item) => !landed(item) && item.cost > 0n)
  let collected: bigint[] = []
  if (lapsed.length > 0) {
    try {
      collected = await retryingDeadlocks(() => chargeLapsedCallsAtomically(database, lapsed.map(chargeOf), now))
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
