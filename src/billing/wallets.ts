import { and, eq, sql } from 'drizzle-orm'
import type { Queryable } from '../db/database'
import { ledgerEntries, type PayerKind, wallets } from '../db/schema'
import { IdempotencyConflictError, InvalidRequestError } from '../errors/kinds'
import { newId } from '../util/ids'

export type WalletRow = typeof wallets.$inferSelect

/** Who a ledger entry is about, besides the wallet itself. */
export interface EntryParties {
  accountId?: string | null
  keyId?: string | null
  userSub?: string | null
  env?: string | null
}

export async function findWallet(db: Queryable, kind: PayerKind, ownerId: string): Promise<WalletRow | undefined> {
  const [row] = await db
    .select()
    .from(wallets)
    .where(and(eq(wallets.kind, kind), eq(wallets.ownerId, ownerId)))
  return row
}

/** The wallet of that owner, created empty when missing (safe under concurrency). */
export async function ensureWallet(db: Queryable, kind: PayerKind, ownerId: string): Promise<WalletRow> {
  await db
    .insert(wallets)
    .values({ id: newId('wal'), kind, ownerId })
    .onConflictDoNothing()
  const row = await findWallet(db, kind, ownerId)
  if (!row) throw new Error(`wallet ${kind}/${ownerId} vanished after insert`)
  return row
}

export interface CreditOptions {
  idempotencyKey?: string
  note?: string
  parties: EntryParties
}

/**
 * Adds `amount` micro-credits (negative: an adjustment down) to a wallet with its ledger entry,
 * in one transaction. The same idempotency key on the same wallet applies once; repeating it
 * with another amount is a conflict. An adjustment may not take the wallet below what it holds.
 */
export async function creditWallet(db: Queryable, walletId: string, amount: bigint, options: CreditOptions): Promise<WalletRow> {
  if (amount === 0n) throw new InvalidRequestError('amount must not be zero.', { param: 'amount' })
  return db.transaction(async (tx) => {
    const [wallet] = await tx.select().from(wallets).where(eq(wallets.id, walletId))
    if (!wallet) throw new Error(`wallet ${walletId} not found`)
    const inserted = await tx
      .insert(ledgerEntries)
      .values({
        kind: amount > 0n ? 'topup' : 'adjustment',
        amount,
        walletId,
        payerType: wallet.kind,
        ...options.parties,
        idempotencyKey: options.idempotencyKey ?? null,
        note: options.note ?? null,
      })
      .onConflictDoNothing()
      .returning({ id: ledgerEntries.id })
    if (inserted.length === 0) return replayed(tx, wallet, amount, options.idempotencyKey)

    const [updated] = await tx
      .update(wallets)
      .set({ balance: sql`${wallets.balance} + ${amount}` })
      .where(and(eq(wallets.id, walletId), sql`${wallets.balance} + ${amount} >= ${wallets.held}`))
      .returning()
    if (!updated) {
      throw new InvalidRequestError('The adjustment would take the balance below what is available.', { param: 'amount' })
    }
    return updated
  })
}

/** A repeated idempotency key: the first request's effect stands. */
async function replayed(tx: Queryable, wallet: WalletRow, amount: bigint, idempotencyKey: string | undefined): Promise<WalletRow> {
  const [first] = await tx
    .select({ amount: ledgerEntries.amount })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.walletId, wallet.id), eq(ledgerEntries.idempotencyKey, idempotencyKey ?? '')))
  if (!first) throw new Error('ledger insert conflicted without an idempotency key')
  if (first.amount !== amount) {
    throw new IdempotencyConflictError('This idempotency_key was already used with a different amount.', { param: 'idempotency_key' })
  }
  // Read again: the first request may have committed after this transaction's first read.
  const [current] = await tx.select().from(wallets).where(eq(wallets.id, wallet.id))
  return current ?? wallet
}
