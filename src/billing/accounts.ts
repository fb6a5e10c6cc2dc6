import { and, desc, eq } from 'drizzle-orm'
import type { Database } from '../db/database'
import { createdAtText, olderThan, type TimeAndId } from '../db/keyset'
import { accounts, wallets } from '../db/schema'
import { newId } from '../util/ids'
import { ensureWallet, findWallet, type WalletRow } from './wallets'

export type AccountRow = typeof accounts.$inferSelect

export interface AccountWithWallet {
  account: AccountRow
  wallet: WalletRow
}

export async function createAccount(db: Database, name: string): Promise<AccountWithWallet> {
  return db.transaction(async (tx) => {
    const [account] = await tx
      .insert(accounts)
      .values({ id: newId('acct'), name })
      .returning()
    if (!account) throw new Error('account insert returned nothing')
    return { account, wallet: await ensureWallet(tx, 'wallet', account.id) }
  })
}

export async function findAccount(db: Database, id: string): Promise<AccountWithWallet | undefined> {
  const [account] = await db.select().from(accounts).where(eq(accounts.id, id))
  if (!account) return undefined
  const wallet = await findWallet(db, 'wallet', id)
  if (!wallet) throw new Error(`account ${id} has no wallet`)
  return { account, wallet }
}

/** Sets (null: clears) the account's low-balance threshold in micro-credits; undefined when there is no such account. */
export async function setLowBalanceThreshold(db: Database, id: string, threshold: bigint | null): Promise<AccountWithWallet | undefined> {
  const [account] = await db.update(accounts).set({ lowBalanceThreshold: threshold }).where(eq(accounts.id, id)).returning()
  if (!account) return undefined
  return findAccount(db, id)
}

/** Newest first, `limit` accounts after `after` (docs/operations.md#reporting), each with its wallet and its position. */
export async function listAccounts(db: Database, limit: number, after: TimeAndId | undefined): Promise<(AccountWithWallet & { position: TimeAndId })[]> {
  const rows = await db
    .select({ account: accounts, wallet: wallets, createdAt: createdAtText(accounts.createdAt) })
    .from(accounts)
    .innerJoin(wallets, and(eq(wallets.kind, 'wallet'), eq(wallets.ownerId, accounts.id)))
    .where(olderThan(accounts.createdAt, accounts.id, after))
    .orderBy(desc(accounts.createdAt), desc(accounts.id))
    .limit(limit)
  return rows.map(({ account, wallet, createdAt }) => ({ account, wallet, position: { createdAt, id: account.id } }))
}
