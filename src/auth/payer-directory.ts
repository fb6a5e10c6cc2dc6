import type { Payer } from '../billing/payer'
import type { PeriodQuotas } from '../billing/periods'
import { findWallet } from '../billing/wallets'
import type { Database } from '../db/database'
import type { PayerKind } from '../db/schema'
import { RefreshingCache } from '../util/refreshing-cache'
import type { ApiKeyRow } from './api-keys'
import type { Caller } from './authenticate'
import type { UserQuotas } from './user-quotas'

/** A key's allotment can be created at any time: look again after this long. */
const ALLOTMENT_RECHECK_MS = 5000
/** A key in use this long after its last look is looked up again in the background, so its calls never wait for it. */
const REFRESH_AFTER_MS = 3000

/** A key's spend limits by period: `monthly_quota` is the month's. */
export function keyQuotas(key: Pick<ApiKeyRow, 'dayQuota' | 'weekQuota' | 'monthlyQuota'>): PeriodQuotas {
  return { day: key.dayQuota, week: key.weekQuota, month: key.monthlyQuota }
}

/**
 * The key's allotment when it has one, else the owner account's wallet; for a user token, the
 * user's allotment. Wallet ids never change, so lookups are remembered. The payer carries the
 * key's or user's spend limits by period.
 */
export class PayerDirectory {
  private readonly wallets = new Map<string, string>()
  /** A key's allotment wallet, or undefined while it has none (looked for again while in use). */
  private readonly allotments: RefreshingCache<string | undefined>

  constructor(
    private readonly db: Database,
    now: () => number,
    private readonly userQuotas: Pick<UserQuotas, 'limitsOf'>,
  ) {
    this.allotments = new RefreshingCache({
      ttlMs: ALLOTMENT_RECHECK_MS,
      refreshAfterMs: REFRESH_AFTER_MS,
      maxEntries: 50_000,
      now,
      permanent: (walletId) => walletId !== undefined,
    })
  }

  async payerFor(caller: Caller): Promise<Payer> {
    if (caller.kind === 'anonymous') throw new Error('a billable call reached billing without a caller')
    if (caller.kind === 'user') {
      const [walletId, limits] = await Promise.all([this.walletOf('user_allotment', caller.user.id), this.userQuotas.limitsOf(caller.user.id)])
      return {
        walletId,
        type: 'user_allotment',
        ownerId: caller.user.id,
        accountId: null,
        keyId: null,
        userSub: caller.user.subject,
        env: null,
        spenderId: caller.user.id,
        quotas: limits.quotas,
        tokensPerMinute: null,
      }
    }
    const key = caller.key
    const common = {
      accountId: key.accountId,
      keyId: key.id,
      userSub: null,
      env: key.env,
      spenderId: key.id,
      quotas: keyQuotas(key),
      tokensPerMinute: key.tpm,
    }
    const allotment = await this.allotmentOf(key.id)
    if (allotment) return { walletId: allotment, type: 'key_allotment', ownerId: key.id, ...common }
    return { walletId: await this.walletOf('wallet', key.accountId), type: 'wallet', ownerId: key.accountId, ...common }
  }

  private async walletOf(kind: PayerKind, ownerId: string): Promise<string> {
    const cacheKey = `${kind}:${ownerId}`
    const known = this.wallets.get(cacheKey)
    if (known) return known
    const wallet = await findWallet(this.db, kind, ownerId)
    if (!wallet) throw new Error(`${kind} of ${ownerId} is missing`)
    this.wallets.set(cacheKey, wallet.id)
    return wallet.id
  }

  private allotmentOf(keyId: string): Promise<string | undefined> {
    return this.allotments.get(keyId, async () => (await findWallet(this.db, 'key_allotment', keyId))?.id)
  }
}
