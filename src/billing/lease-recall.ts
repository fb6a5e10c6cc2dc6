import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from '../db/client'

/**
 * The recall of credit leases (docs/billing.md#credit-lease): an instance about to refuse a call
 * for want of credit marks the wallet when other instances hold leases on it; while the mark is
 * recent, every instance gives back what its leases on the wallet do not need and takes no new
 * lease there, so the wallet's credit is held call by call, as without leases.
 */

/**
 * Marks the wallet recalled at `now` when another instance holds a lease on it; true when it
 * did (the caller may then wait for their credit to come back), false when no other instance
 * has a lease there (nothing will come back: the refusal stands).
 */
export async function recallLeasesAtomically(database: Pick<DatabaseHandle, 'rows'>, walletId: string, instanceId: string, now: Date): Promise<boolean> {
  const rows = await database.rows<{ id: string }>(sql`
    update wallets set leases_recalled_at = ${now.toISOString()}::timestamptz
    where id = ${walletId}
      and exists (select 1 from holds where wallet_id = ${walletId} and starts_with(id, 'lease_') and instance_id <> ${instanceId})
    returning id`)
  return rows.length > 0
}

/** Of these wallets, those recalled at or after `since`, with when. */
export async function recalledWallets(database: Pick<DatabaseHandle, 'rows'>, walletIds: string[], since: Date): Promise<Map<string, number>> {
  const rows = await database.rows<{ id: string; recalled_at: string | Date }>(sql`
    select id, leases_recalled_at as recalled_at from wallets
    where id in (select jsonb_array_elements_text(${JSON.stringify(walletIds)}::text::jsonb))
      and leases_recalled_at >= ${since.toISOString()}::timestamptz`)
  return new Map(rows.map((row) => [row.id, new Date(row.recalled_at).getTime()]))
}
