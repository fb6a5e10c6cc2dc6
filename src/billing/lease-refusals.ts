import type { HoldRequest } from './hold'
import { isLeaseableRefusal, type LeaseableRefusal } from './lease-keys'
import type { LeaseRecalls } from './lease-recall'

/**
 * A call refused while other instances' leases could cover it is tried again after each of these
 * pauses (1.5 s in all), while those instances answer the recall (they check every 250 ms). A
 * count of tries rather than a deadline: an event loop stalled meanwhile still leaves them time.
 */
const RECALL_RETRY_PAUSES_MS = [50, 100, 200, 400, 400, 350]

/** This process's leases as a refused call needs them: the recalls it sends, and what its own leases give back. */
export interface RefusedCallLeases {
  recalls: LeaseRecalls
  /** Gives back what this process's leases on a wallet hold beyond their open draws; true when anything went back. */
  returnUnused(walletId: string): Promise<boolean>
}

/**
 * A call was refused for want of credit (docs/billing.md#credit-lease): gives back what this
 * process's own leases on the wallet do not need and tries again; if other instances hold leases
 * on the wallet, recalls them and tries again for about 1.5 s while they give back theirs, else
 * once more.
 */
export async function retryRefused<T>(leases: RefusedCallLeases, request: HoldRequest, retake: () => Promise<T>, refusal: LeaseableRefusal): Promise<T> {
  const walletId = request.payer.walletId
  // A wallet this low takes no new lease here for a while: a lease taken by another call
  // meanwhile would keep the very credit given back below.
  leases.recalls.mark(walletId)
  let refused = refusal
  if (await leases.returnUnused(walletId)) {
    try {
      return await retake()
    } catch (error) {
      if (!isLeaseableRefusal(error)) throw error
      refused = error
    }
  }
  // No other instance's lease holds credit: none did, or theirs went back since the retake above
  // (their own refusals give it back). One more try then answers as exact holds would.
  if (!(await leases.recalls.recall(walletId, request.amount))) return retake()
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
