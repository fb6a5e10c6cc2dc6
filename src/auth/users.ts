import { and, desc, eq } from 'drizzle-orm'
import { ensureWallet, type WalletRow } from '../billing/wallets'
import type { Database } from '../db/database'
import { createdAtText, olderThan, type TimeAndId } from '../db/keyset'
import { users, wallets } from '../db/schema'
import { newId } from '../util/ids'

export type UserRow = typeof users.$inferSelect

/** Users signed in through the identity provider: created with an empty allotment on first use. */
export class UserStore {
  private readonly known = new Map<string, UserRow>()

  constructor(private readonly db: Database) {}

  async find(issuer: string, subject: string): Promise<UserRow | undefined> {
    const [row] = await this.db
      .select()
      .from(users)
      .where(and(eq(users.issuer, issuer), eq(users.subject, subject)))
    return row
  }

  async findOrCreate(issuer: string, subject: string): Promise<UserRow> {
    const cacheKey = `${issuer}\n${subject}`
    const cached = this.known.get(cacheKey)
    if (cached) return cached
    const row = await this.db.transaction(async (tx) => {
      await tx
        .insert(users)
        .values({ id: newId('usr'), issuer, subject })
        .onConflictDoNothing()
      const [row] = await tx
        .select()
        .from(users)
        .where(and(eq(users.issuer, issuer), eq(users.subject, subject)))
      if (!row) throw new Error('user vanished after insert')
      await ensureWallet(tx, 'user_allotment', row.id)
      return row
    })
    this.known.set(cacheKey, row)
    return row
  }

  /** Newest first, `limit` users after `after`, each with its allotment (docs/operations.md#reporting). */
  async list(limit: number, after: TimeAndId | undefined): Promise<{ row: UserRow; allotment: WalletRow | null; position: TimeAndId }[]> {
    const rows = await this.db
      .select({ row: users, allotment: wallets, createdAt: createdAtText(users.createdAt) })
      .from(users)
      .leftJoin(wallets, and(eq(wallets.kind, 'user_allotment'), eq(wallets.ownerId, users.id)))
      .where(olderThan(users.createdAt, users.id, after))
      .orderBy(desc(users.createdAt), desc(users.id))
      .limit(limit)
    return rows.map(({ row, allotment, createdAt }) => ({ row, allotment, position: { createdAt, id: row.id } }))
  }
}
