import { and, desc, eq, lt, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../db/database'
import { type LedgerKind, ledgerEntries, wallets } from '../db/schema'
import { creditsJson } from './money'

export const LEDGER_KINDS: readonly LedgerKind[] = ['topup', 'adjustment', 'hold', 'charge', 'release', 'expire']

export interface LedgerFilter {
  accountId?: string
  keyId?: string
  userSub?: string
  requestId?: string
  sessionId?: string
  model?: string
  kind?: LedgerKind
  /** ISO-8601 times Postgres reads to the microsecond: `since` inclusive, `until` exclusive. */
  since?: string
  until?: string
}

/**
 * Newest first (by entry id, the ledger's order), `limit` entries with ids below `beforeId`.
 * Pages and exports read this same way (docs/operations.md#reporting).
 */
export async function listLedger(db: Database, filter: LedgerFilter, page: { limit: number; beforeId?: bigint }) {
  const conditions: SQL[] = []
  if (filter.accountId !== undefined) conditions.push(eq(ledgerEntries.accountId, filter.accountId))
  if (filter.keyId !== undefined) conditions.push(eq(ledgerEntries.keyId, filter.keyId))
  if (filter.userSub !== undefined) conditions.push(eq(ledgerEntries.userSub, filter.userSub))
  if (filter.requestId !== undefined) conditions.push(eq(ledgerEntries.requestId, filter.requestId))
  if (filter.sessionId !== undefined) conditions.push(eq(ledgerEntries.sessionId, filter.sessionId))
  if (filter.model !== undefined) conditions.push(eq(ledgerEntries.model, filter.model))
  if (filter.kind !== undefined) conditions.push(eq(ledgerEntries.kind, filter.kind))
  // The text itself, not a Date: Postgres keeps the microseconds a Date would drop.
  if (filter.since !== undefined) conditions.push(sql`${ledgerEntries.createdAt} >= ${filter.since}::timestamptz`)
  if (filter.until !== undefined) conditions.push(sql`${ledgerEntries.createdAt} < ${filter.until}::timestamptz`)
  if (page.beforeId !== undefined) conditions.push(lt(ledgerEntries.id, page.beforeId))
  const rows = await db
    .select({ entry: ledgerEntries, payerId: wallets.ownerId })
    .from(ledgerEntries)
    .innerJoin(wallets, eq(wallets.id, ledgerEntries.walletId))
    .where(and(...conditions))
    .orderBy(desc(ledgerEntries.id))
    .limit(page.limit)
  return rows.map(({ entry, payerId }) => ({ id: entry.id, view: ledgerEntryView(entry, payerId) }))
}

export type LedgerEntryView = ReturnType<typeof ledgerEntryView>

/** One entry as the admin API writes it: credit amounts exact to six decimals (docs/billing.md#ledger). */
function ledgerEntryView(entry: typeof ledgerEntries.$inferSelect, payerId: string) {
  return {
    id: entry.id.toString(),
    created_at: entry.createdAt.toISOString(),
    kind: entry.kind,
    amount: creditsJson(entry.amount),
    payer: { type: entry.payerType, id: payerId },
    account_id: entry.accountId,
    key_id: entry.keyId,
    user_sub: entry.userSub,
    env: entry.env,
    request_id: entry.requestId,
    session_id: entry.sessionId,
    model: entry.model,
    // The published field keeps its name, `route`: it holds the provider (docs/billing.md#ledger).
    route: entry.provider,
    usage: entry.usage,
    uncollected: creditsJson(entry.uncollected),
    note: entry.note,
  }
}
