import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from '../db/client'
import { retryingDeadlocks } from '../db/rows'

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

/**
 * This process's side of recalls: which wallets take no new lease here for now (recalled by
 * this instance or another, `recallMs` ago at most), and the recalls it sends, one per wallet
 * and amount at a time (calls refused together share one).
 */
export class LeaseRecalls {
  /** Wallet -> until when it takes no new lease here. */
  private readonly recalledUntil = new Map<string, number>()
  /** Recalls being sent, by wallet and amount. */
  private readonly recalling = new Map<string, Promise<boolean>>()

  constructor(
    private readonly database: Pick<DatabaseHandle, 'rows'>,
    private readonly options: { instanceId: string; now: () => number; recallMs: number },
  ) {}

  /** The wallet takes no new lease here for `recallMs` from `at` (default now). */
  mark(walletId: string, at = this.options.now()): void {
    this.recalledUntil.set(walletId, at + this.options.recallMs)
  }

  isRecalled(walletId: string): boolean {
    const until = this.recalledUntil.get(walletId)
    if (until === undefined) return false
    if (until > this.options.now()) return true
    this.recalledUntil.delete(walletId)
    return false
  }

  /** A lease taken now is refused when its wallet was recalled at or after this moment. */
  recalledSince(now: number): Date {
    return new Date(now - this.options.recallMs)
  }

  /** Recalls the leases of other instances on the wallet; true when their credit could cover `needed`. */
  recall(walletId: string, needed: bigint): Promise<boolean> {
    const key = `${walletId}:${needed}`
    const under = this.recalling.get(key)
    if (under) return under
    const now = this.options.now()
    const recalling = retryingDeadlocks(() =>
      recallLeasesAtomically(this.database, { walletId, instanceId: this.options.instanceId, needed, now: new Date(now) }),
    )
      .then((recalled) => {
        if (recalled) this.mark(walletId, now)
        return recalled
      })
      .finally(() => this.recalling.delete(key))
    this.recalling.set(key, recalling)
    return recalling
  }

  /** Of these wallets, those another instance recalled lately: each is marked here, and returned. */
  async recalledAmong(walletIds: string[]): Promise<string[]> {
    if (walletIds.length === 0) return []
    const recalled = await recalledWallets(this.database, walletIds, this.recalledSince(this.options.now()))
    for (const [walletId, recalledAt] of recalled) this.mark(walletId, recalledAt)
    return [...recalled.keys()]
  }
}
