import type { DatabaseHandle } from '../db/client'
import { describeDatabaseError, isTransientDatabaseError } from '../db/errors'
import { retryingDeadlocks } from '../db/rows'
import { logEvent } from '../observability/log'
import { newId } from '../util/ids'
import type { HoldRequest } from './hold'
import { grantedLease, type Lease } from './lease'
import { leaseKeyOf } from './lease-keys'
import type { LeaseRecalls } from './lease-recall'
import type { LeaseSizer } from './lease-sizing'
import { takeLeaseAtomically } from './lease-statements'
import type { Payer } from './payer'
import { NO_QUOTAS, periodKeys } from './periods'

/** What taking a lease needs to know: who takes it, for how long, and how large it may be. */
export interface LeaseTaker {
  instanceId: string
  ttlMs: number
  now: () => number
  /** A lease takes at most 1/share of what its wallet has available. */
  share: bigint
  sizer: LeaseSizer
  recalls: LeaseRecalls
}

/**
 * Takes a new lease in the database for the request's lease key (docs/billing.md#credit-lease),
 * sized to its wallet's rate and never smaller than the request; undefined when none was granted
 * (the wallet is too low or was recalled, or the database refused the statement): the call is
 * then held exactly. A database out of reach throws: the call fails now (503).
 */
export async function takeLease(database: Pick<DatabaseHandle, 'rows'>, taker: LeaseTaker, request: HoldRequest): Promise<Lease | undefined> {
  const { walletId } = request.payer
  const key = leaseKeyOf(request.payer)
  const quota = key !== walletId
  const now = new Date(taker.now())
  const id = newId('lease')
  const periods = periodKeys(now)
  // A wallet's lease serves every key of the wallet: it names none. A limited key's or user's is its own.
  const payer: Payer = quota
    ? { ...request.payer, tokensPerMinute: null }
    : { ...request.payer, keyId: null, env: null, spenderId: null, quotas: NO_QUOTAS, tokensPerMinute: null }
  let granted: bigint
  try {
    granted = await retryingDeadlocks(() =>
      takeLeaseAtomically(database, {
        id,
        payer,
        wanted: taker.sizer.wanted(key, request.amount),
        minimum: request.amount,
        share: taker.share,
        instanceId: taker.instanceId,
        periods,
        now,
        expiresAt: new Date(now.getTime() + taker.ttlMs),
        recalledSince: taker.recalls.recalledSince(now.getTime()),
      }),
    )
  } catch (error) {
    // Outcome unknown: a lease it may have taken expires by the sweep. An outage fails the call now (503).
    if (isTransientDatabaseError(error)) throw error
    logEvent('warn', 'could not take a credit lease; holding exactly', { error: describeDatabaseError(error) })
    return undefined
  }
  if (granted === 0n) return undefined
  return grantedLease({ id, walletId, key, quotaDay: quota ? periods.day : null, granted, takenAt: now.getTime(), ttlMs: taker.ttlMs })
}
