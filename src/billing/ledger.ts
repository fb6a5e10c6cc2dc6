import { and, desc, eq, type SQL } from 'drizzle-orm'
import type { Database } from '../db/client'
import { ledgerEntries, wallets } from '../db/schema'
import { microsToCredits } from './money'

export interface LedgerFilter {
  accountId?: string
  keyId?: string
  userSub?: string
  requestId?: string
}

/** Newest first. */
export async function listLedger(db: Database, filter: LedgerFilter, limit: number) {
  const conditions: SQL[] = []
  if (filter.accountId) conditions.push(eq(ledgerEntries.accountId, filter.accountId))
  if (filter.keyId) conditions.push(eq(ledgerEntries.keyId, filter.keyId))
  if (filter.userSub) conditions.push(eq(ledgerEntries.userSub, filter.userSub))
  if (filter.requestId) conditions.push(eq(ledgerEntries.requestId, filter.requestId))
  const rows = await db
    .select({ entry: ledgerEntries, payerId: wallets.ownerId })
    .from(ledgerEntries)
    .innerJoin(wallets, eq(wallets.id, ledgerEntries.walletId))
    .where(and(...conditions))
    .orderBy(desc(ledgerEntries.id))
    .limit(limit)
  return rows.map(({ entry, payerId }) => ({
    id: entry.id.toString(),
    created_at: entry.createdAt.toISOString(),
    kind: entry.kind,
    amount: microsToCredits(entry.amount),
    payer: { type: entry.payerType, id: payerId },
    account_id: entry.accountId,
    key_id: entry.keyId,
    user_sub: entry.userSub,
    env: entry.env,
    request_id: entry.requestId,
    model: entry.model,
    route: entry.route,
    usage: entry.usage,
    uncollected: microsToCredits(entry.uncollected),
    note: entry.note,
  }))
}
