import { and, desc, eq } from 'drizzle-orm'
import type { PeriodQuotas } from '../billing/periods'
import { creditWallet, ensureWallet, type WalletRow } from '../billing/wallets'
import type { Database } from '../db/database'
import { createdAtText, olderThan, type TimeAndId } from '../db/keyset'
import { apiKeys, wallets } from '../db/schema'
import { InvalidApiKeyError } from '../errors/kinds'
import { newId } from '../util/ids'
import { RefreshingCache } from '../util/refreshing-cache'
import { generateApiKey, hashApiKey, type KeyEnv, keyHint, looksLikeApiKey, parseApiKey, sameHash } from './api-key-secret'

export type ApiKeyRow = typeof apiKeys.$inferSelect

export interface NewApiKey {
  accountId: string
  env: KeyEnv
  name?: string
  scopes?: string[]
  allowedModels?: string[]
  /** Spend limits by period in micro-credits (docs/billing.md#spend-limits-by-period); absent or null: none. */
  quotas?: Partial<PeriodQuotas>
  /** Micro-credits: below this the key's allotment raises a `balance.low` alert. */
  lowBalanceThreshold?: bigint
  /** Micro-credits; given (even 0) means the key pays from its own allotment. */
  allotment?: bigint
  expiresAt?: Date
  rpm?: number
  tpm?: number
}

/** What an admin may change on a key; null clears a limit. */
export interface ApiKeyChanges {
  name?: string | null
  scopes?: string[] | null
  allowedModels?: string[] | null
  monthlyQuota?: bigint | null
  weekQuota?: bigint | null
  dayQuota?: bigint | null
  lowBalanceThreshold?: bigint | null
  rpm?: number | null
  tpm?: number | null
  expiresAt?: Date | null
}

/** Revocation (and any edit) must reach every instance within 5 s (docs/api.md#credentials), so nothing is cached longer. */
const CACHE_TTL_MS = 5000
/**
 * A key still in use this long after its row was read is read again in the background, so a
 * busy key's calls never wait for the database while what they see stays under CACHE_TTL_MS old.
 */
const REFRESH_AFTER_MS = 3000
const CACHE_MAX_ENTRIES = 10_000

/** API keys: creation, revocation and the per-request check, with a short-lived lookup cache. */
export class ApiKeyStore {
  /** Key rows by secret hash (undefined: no such key), refreshed while in use. */
  private readonly cache: RefreshingCache<ApiKeyRow | undefined>

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new RefreshingCache({ ttlMs: CACHE_TTL_MS, refreshAfterMs: REFRESH_AFTER_MS, maxEntries: CACHE_MAX_ENTRIES, now })
  }

  /** Returns the stored row and the full key, which exists nowhere else afterwards. */
  async create(input: NewApiKey): Promise<{ row: ApiKeyRow; key: string }> {
    const key = generateApiKey(input.env)
    const row = await this.db.transaction(async (tx) => {
      const [row] = await tx
        .insert(apiKeys)
        .values({
          id: newId('key'),
          accountId: input.accountId,
          env: input.env,
          name: input.name ?? null,
          secretHash: hashApiKey(key),
          hint: keyHint(key),
          scopes: input.scopes ?? null,
          allowedModels: input.allowedModels ?? null,
          monthlyQuota: input.quotas?.month ?? null,
          weekQuota: input.quotas?.week ?? null,
          dayQuota: input.quotas?.day ?? null,
          lowBalanceThreshold: input.lowBalanceThreshold ?? null,
          expiresAt: input.expiresAt ?? null,
          rpm: input.rpm ?? null,
          tpm: input.tpm ?? null,
        })
        .returning()
      if (!row) throw new Error('key insert returned nothing')
      if (input.allotment !== undefined) {
        const wallet = await ensureWallet(tx, 'key_allotment', row.id)
        if (input.allotment > 0n) {
          await creditWallet(tx, wallet.id, input.allotment, { note: 'initial allotment', parties: { accountId: row.accountId, keyId: row.id, env: row.env } })
        }
      }
      return row
    })
    return { row, key }
  }

  async get(id: string): Promise<ApiKeyRow | undefined> {
    const [row] = await this.db.select().from(apiKeys).where(eq(apiKeys.id, id))
    return row
  }

  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  async revoke(id: string): Promise<ApiKeyRow | undefined> {
    const existing = await this.get(id)
    if (!existing) return undefined
    let row = existing
    if (!existing.revokedAt) {
      const [updated] = await this.db
        .update(apiKeys)
        .set({ revokedAt: new Date(this.now()) })
        .where(eq(apiKeys.id, id))
        .returning()
      row = updated ?? existing
    }
    this.forget(id)
    return row
  }

  /**
   * Applies an admin's edit: at once on this instance, whose cached lookups of the key are
   * dropped, and within the cache's 5 s on other instances, like a revocation.
   */
  async update(id: string, changes: ApiKeyChanges): Promise<ApiKeyRow | undefined> {
    if (Object.keys(changes).length === 0) return this.get(id)
    const [row] = await this.db.update(apiKeys).set(changes).where(eq(apiKeys.id, id)).returning()
    this.forget(id)
    return row
  }

  /** Newest first, `limit` keys after `after`, of one account or of all, each with its allotment (docs/operations.md#reporting). */
  async list(options: {
    accountId?: string
    limit: number
    after?: TimeAndId
  }): Promise<{ row: ApiKeyRow; allotment: WalletRow | null; position: TimeAndId }[]> {
    const rows = await this.db
      .select({ row: apiKeys, allotment: wallets, createdAt: createdAtText(apiKeys.createdAt) })
      .from(apiKeys)
      .leftJoin(wallets, and(eq(wallets.kind, 'key_allotment'), eq(wallets.ownerId, apiKeys.id)))
      .where(
        and(options.accountId === undefined ? undefined : eq(apiKeys.accountId, options.accountId), olderThan(apiKeys.createdAt, apiKeys.id, options.after)),
      )
      .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
      .limit(options.limit)
    return rows.map(({ row, allotment, createdAt }) => ({ row, allotment, position: { createdAt, id: row.id } }))
  }

  private forget(id: string): void {
    this.cache.forget((row) => row?.id === id)
  }

  /** The live key behind a presented credential, or InvalidApiKeyError. */
  async verify(credential: string): Promise<ApiKeyRow> {
    if (!looksLikeApiKey(credential) || !parseApiKey(credential)) {
      throw new InvalidApiKeyError('The API key is malformed: expected tollgate_sk_prod_… or tollgate_sk_dev_….')
    }
    const hash = hashApiKey(credential)
    const row = await this.lookup(hash)
    if (!row || !sameHash(row.secretHash, hash)) throw new InvalidApiKeyError('The API key is not valid.')
    if (row.revokedAt) throw new InvalidApiKeyError('The API key has been revoked.')
    if (row.expiresAt && row.expiresAt.getTime() <= this.now()) throw new InvalidApiKeyError('The API key has expired.')
    return row
  }

  private lookup(hash: string): Promise<ApiKeyRow | undefined> {
    return this.cache.get(hash, async () => {
      const [row] = await this.db.select().from(apiKeys).where(eq(apiKeys.secretHash, hash))
      return row
    })
  }
}
