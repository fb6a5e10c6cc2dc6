import { eq } from 'drizzle-orm'
import { hasQuota, NO_QUOTAS, type PeriodQuotas } from '../billing/periods'
import type { Database } from '../db/database'
import { quotaDefaults, users } from '../db/schema'
import { RefreshingCache } from '../util/refreshing-cache'

/** An edit must reach every instance within 5 s, as a key's does (docs/api.md#credentials): nothing is cached longer. */
const CACHE_TTL_MS = 5000
/** A user still calling this long after their limits were read has them read again in the background, so no call waits. */
const REFRESH_AFTER_MS = 3000
const CACHE_MAX_ENTRIES = 50_000
/** The one row of quota_defaults that holds the users' default. */
const USER_DEFAULT = 'user'

/** Where a user's limits come from: their own, the default for every user without their own, or neither. */
export type QuotaSource = 'user' | 'default' | null

/** A user's spend limits in force, and where they come from. */
export interface UserLimits {
  quotas: PeriodQuotas
  source: QuotaSource
}

/**
 * Users' spend limits by period (docs/billing.md#spend-limits-by-period): a user's own, set by
 * an admin, else the default for every user without their own. Read per call from a short-lived
 * cache, refreshed in the background while in use.
 */
export class UserQuotas {
  private readonly own: RefreshingCache<PeriodQuotas>
  private readonly defaults: RefreshingCache<PeriodQuotas>

  constructor(
    private readonly db: Database,
    now: () => number,
  ) {
    const options = { ttlMs: CACHE_TTL_MS, refreshAfterMs: REFRESH_AFTER_MS, maxEntries: CACHE_MAX_ENTRIES, now }
    this.own = new RefreshingCache(options)
    this.defaults = new RefreshingCache(options)
  }

  /** The limits in force for a user (by id), as calls see them: at most 5 s old. */
  async limitsOf(userId: string): Promise<UserLimits> {
    const own = await this.own.get(userId, () => this.readOwn(userId))
    if (hasQuota(own)) return { quotas: own, source: 'user' }
    const fallback = await this.defaults.get(USER_DEFAULT, () => this.readDefault())
    return hasQuota(fallback) ? { quotas: fallback, source: 'default' } : { quotas: NO_QUOTAS, source: null }
  }

  /** Sets a user's own limits (all null: none of their own, the default applies); at once here, within 5 s elsewhere. */
  async setOwn(userId: string, quotas: PeriodQuotas): Promise<void> {
    await this.db.update(users).set({ dayQuota: quotas.day, weekQuota: quotas.week, monthQuota: quotas.month }).where(eq(users.id, userId))
    this.own.forget(() => true)
  }

  /** The default for every user without limits of their own. */
  readDefault(): Promise<PeriodQuotas> {
    return this.db
      .select()
      .from(quotaDefaults)
      .where(eq(quotaDefaults.scope, USER_DEFAULT))
      .then(([row]) => (row ? { day: row.dayQuota, week: row.weekQuota, month: row.monthQuota } : NO_QUOTAS))
  }

  /** Sets the default (all null clears it); at once here, within 5 s elsewhere. */
  async setDefault(quotas: PeriodQuotas): Promise<void> {
    const values = { dayQuota: quotas.day, weekQuota: quotas.week, monthQuota: quotas.month }
    if (hasQuota(quotas)) {
      await this.db
        .insert(quotaDefaults)
        .values({ scope: USER_DEFAULT, ...values })
        .onConflictDoUpdate({ target: quotaDefaults.scope, set: values })
    } else await this.db.delete(quotaDefaults).where(eq(quotaDefaults.scope, USER_DEFAULT))
    this.defaults.forget(() => true)
  }

  private async readOwn(userId: string): Promise<PeriodQuotas> {
    const [row] = await this.db.select({ day: users.dayQuota, week: users.weekQuota, month: users.monthQuota }).from(users).where(eq(users.id, userId))
    return row ?? NO_QUOTAS
  }
}
