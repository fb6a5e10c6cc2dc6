import { eq } from 'drizzle-orm'
import type { Database } from '../db/client'
import { accounts } from '../db/schema'
import { newId } from '../util/ids'
import { ensureWallet, findWallet, type WalletRow } from './wallets'

export type AccountRow = typeof accounts.$inferSelect

export interface AccountWithWallet {
  account: AccountRow
  wallet: WalletRow
}

export async function createAccount(db: Database, name: string): Promise<AccountWithWallet> {
  return db.transaction(async (tx) => {
    const [account] = await tx.insert(accounts).values({ id: newId('acct'), name }).returning()
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
