import { sql } from 'drizzle-orm'
import { openDatabase } from '../src/db/client'

/** The ledger invariants after a run: "exact", or what is wrong. */
export async function checkBooks(database: { kind: 'pglite'; dataDir: string } | { kind: 'postgres'; url: string }): Promise<string> {
  const handle = await openDatabase(database.kind === 'pglite' ? { dataDir: database.dataDir } : { url: database.url })
  try {
    const count = async (query: ReturnType<typeof sql>) => {
      const result = await handle.db.execute(query)
      const rows = (Array.isArray(result) ? result : (result as unknown as { rows: { n: number }[] }).rows) as { n: number }[]
      return Number(rows[0]?.n ?? 0)
    }
    const problems = [
      ['wallets below zero', await count(sql`select count(*) as n from wallets where balance < held or held < 0`)],
      ['open holds', await count(sql`select count(*) as n from holds`)],
      [
        'balances off the ledger',
        await count(sql`select count(*) as n from (select w.id from wallets w left join ledger_entries l on l.wallet_id = w.id group by w.id, w.balance
          having w.balance <> coalesce(sum(case when l.kind in ('topup', 'adjustment') then l.amount when l.kind = 'charge' then -l.amount else 0 end), 0)) off`),
      ],
      [
        'holds not closed exactly',
        await count(sql`select count(*) as n from (select hold_id from ledger_entries where hold_id is not null group by hold_id
          having sum(case when kind = 'hold' then 1 else 0 end) <> 1
              or sum(case when kind in ('charge', 'release', 'expire') then amount else 0 end) <> sum(case when kind = 'hold' then amount else 0 end)) off`),
      ],
    ].filter(([, n]) => Number(n) > 0)
    const charges = await count(sql`select count(*) as n from ledger_entries where kind = 'charge'`)
    return problems.length === 0 ? 'exact' : `${problems.map(([what, n]) => `${n} ${what}`).join(', ')} (of ${charges} charges)`
  } finally {
    await handle.close()
  }
}
