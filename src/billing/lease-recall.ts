import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from '../db/client'

/**
 * The recall of credit leases (docs/billing.md#credit-lease): an instance about to refuse a call
 * for want of credit marks the wallet when other instances hold leases on it; while the mark is
 * recent, every instance gives back what its leases on the wallet do not need and takes no new
 * lease there, so the wallet's credit is held call by call, as without leases.
 */

/**
 * Marks the wallet recalled at `now` when leases of other instances hold enough that, given
 * back, the wallet could cover `needed`; true when it did (the caller may then wait for their
 * unused credit), false when even all of it would not do (the refusal stands at once).
 */
export async function recallLeasesAtomically(
  database: Pick<DatabaseHandle, 'rows'>,
  recall: { walletId: string; instanceId: string; needed: bigint; now: Date },
): Promise<boolean> {
  const rows = await database.rows<{ id: string }>(sql`
    with others as (
      select coalesce(sum(amount), 0) as leased from holds
      where wallet_id = ${recall.walletId} and starts_with(id, 'lease_') and instance_id <> ${recall.instanceId}
    )
    update wallets set leases_recalled_at = ${recall.now.toISOString()}::timestamptz
    from others
    where id = ${recall.walletId} and others.leased > 0 and balance - held + others.leased >= ${recall.needed.toString()}::bigint
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
