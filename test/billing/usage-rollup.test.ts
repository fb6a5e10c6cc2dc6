import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { HoldRequest } from '../../src/billing/hold'
import { closeHoldsAtomically } from '../../src/billing/hold-statements'
import { expireHoldsPage } from '../../src/billing/sweep-statements'
import { migrate } from '../../src/db/migrate'
import { migrations } from '../../src/db/migrations.generated'
import { queryRows } from '../../src/db/rows'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance, expectRollupMatchesLedger } from '../support/ledger-checks'
import { rejectionOf } from '../support/rejection'

/**
 * The usage rollup is written by the statement that writes the charges: it always equals the
 * sums over the ledger's charge entries (expectBooksBalance checks it after every billing
 * test), a statement that fails writes neither, and concurrent settlements keep it exact.
 */
for (const kind of testDatabases) {
  describe(`usage rollup (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)

    async function holdFor(model: string, amount = 5000n) {
      const { key } = await suite.harness.key()
      const caller = await suite.harness.services.authenticator.authenticate(
        { method: 'POST', path: '/v1/chat/completions', credentials: 'bearer', scope: 'chat' },
        new Headers({ authorization: `Bearer ${key}` }),
      )
      const request: HoldRequest = {
        payer: await suite.harness.services.payers.payerFor(caller),
        amount,
        requestId: `req_${model}_${Math.random()}`,
        model,
        provider: 'a',
      }
      return suite.harness.services.holds.take(request)
    }

    const count = async (query: ReturnType<typeof sql>) => (await queryRows<{ n: number }>(suite.database.db, query))[0]?.n

    test('a settlement whose rollup the database refuses writes no charge either', async () => {
      const hold = await holdFor('test/smart')
      const usage = { input_tokens: 10, output_tokens: 4 }
      await suite.database.db.execute(sql`alter table usage_rollups add constraint refuse_for_test check (model <> 'test/smart')`)
      try {
        expect(
          await rejectionOf(closeHoldsAtomically(suite.database, [{ hold, cost: 300n, usage, model: 'test/smart', provider: 'a' }], new Date())),
        ).toBeInstanceOf(Error)
      } finally {
        await suite.database.db.execute(sql`alter table usage_rollups drop constraint refuse_for_test`)
      }
      expect(await count(sql`select count(*)::int as n from ledger_entries where hold_id = ${hold.id} and kind <> 'hold'`)).toBe(0)
      expect(await count(sql`select count(*)::int as n from holds where id = ${hold.id}`)).toBe(1)
      expect(await count(sql`select count(*)::int as n from usage_rollups where key_id = ${hold.payer.keyId}`)).toBe(0)
      await expectBooksBalance(suite.database.db, { openHolds: true })

      const closed = await closeHoldsAtomically(suite.database, [{ hold, cost: 300n, usage, model: 'test/smart', provider: 'a' }], new Date())
      expect(closed.has(hold.id)).toBe(true)
      const [rollup] = await queryRows<{ requests: string; input_tokens: string; cost: string }>(
        suite.database.db,
        sql`select requests::text, input_tokens::text, cost::text from usage_rollups where key_id = ${hold.payer.keyId}`,
      )
      expect(rollup).toEqual({ requests: '1', input_tokens: '10', cost: '300' })
      await expectBooksBalance(suite.database.db)
    })

    test('a batch with a member the database refuses writes neither charges nor rollup for any member', async () => {
      const good = await holdFor('test/cheap')
      const other = await holdFor('test/cheap')
      const items = [good, other].map((hold) => ({ hold, cost: 100n, usage: { input_tokens: 1 }, model: 'test/cheap', provider: 'a' }))
      // Postgres text cannot hold NUL: the statement carrying it fails, as any value the database refuses would.
      const poisoned = [...items, { ...items[1]!, model: 'poison\u0000model' }]
      expect(await rejectionOf(closeHoldsAtomically(suite.database, poisoned, new Date()))).toBeInstanceOf(Error)
      for (const hold of [good, other]) {
        expect(await count(sql`select count(*)::int as n from ledger_entries where hold_id = ${hold.id} and kind = 'charge'`)).toBe(0)
        expect(await count(sql`select count(*)::int as n from usage_rollups where key_id = ${hold.payer.keyId}`)).toBe(0)
      }
      await closeHoldsAtomically(suite.database, items, new Date())
      await expectBooksBalance(suite.database.db)
    })

    test('a hold a sweep already expired is still charged, from the available credit, and in the rollup', async () => {
      const hold = await holdFor('test/cheap')
      expect(await expireHoldsPage(suite.database, { now: new Date(), everyOpenHold: true, pageSize: 100 })).toBeGreaterThanOrEqual(1)
      const balance = async () =>
        (await queryRows<{ balance: string }>(suite.database.db, sql`select balance::text from wallets where id = ${hold.payer.walletId}`))[0]?.balance
      const before = BigInt((await balance()) ?? '0')
      const closed = await suite.harness.services.holds.settle(hold, 777n, { input_tokens: 3, output_tokens: 2 })
      expect(closed).toEqual({ charged: 777n, uncollected: 0n, lapsed: true })
      expect(BigInt((await balance()) ?? '0')).toBe(before - 777n)
      const charges = await queryRows<{ amount: string; hold_id: string | null }>(
        suite.database.db,
        sql`select amount::text, hold_id from ledger_entries where request_id = ${hold.requestId} and kind = 'charge'`,
      )
      // Naming no hold: the expired hold's own entries (hold, expire) already balance.
      expect(charges).toEqual([{ amount: '777', hold_id: null }])
      const [rollup] = await queryRows<{ requests: string; output_tokens: string; cost: string; uncollected: string }>(
        suite.database.db,
        sql`select requests::text, output_tokens::text, cost::text, uncollected::text from usage_rollups where key_id = ${hold.payer.keyId}`,
      )
      expect(rollup).toEqual({ requests: '1', output_tokens: '2', cost: '777', uncollected: '0' })
      await expectBooksBalance(suite.database.db)
    })

    test('concurrent settlements on many wallets from two gateways keep the sums exact', async () => {
      // A second gateway on the same database: its own hold book, so batches from both run at once.
      const second = suite.instance()
      try {
        const keys = await Promise.all(Array.from({ length: 12 }, () => suite.harness.key()))
        const before = await count(sql`select coalesce(sum(requests), 0)::int as n from usage_rollups`)
        const replies = await Promise.all(
          Array.from({ length: 240 }, (_, index) =>
            (index % 2 === 0 ? suite.harness : second).call('POST', '/v1/chat/completions', {
              headers: bearer(keys[index % keys.length]!.key),
              body: { model: index % 3 === 0 ? 'test/smart' : 'test/cheap', messages: [{ role: 'user', content: `call ${index}` }], max_tokens: 20 },
            }),
          ),
        )
        expect(replies.filter((reply) => reply.status !== 200).map((reply) => reply.text)).toEqual([])
        expect(await count(sql`select coalesce(sum(requests), 0)::int as n from usage_rollups`)).toBe((before ?? 0) + 240)
        await expectBooksBalance(suite.database.db)
      } finally {
        second.services.close()
      }
    }, 120_000)
  })

  describe(`usage rollup migration (${kind.kind})`, () => {
    // An unmigrated embedded database is made from scratch (initdb in process): seconds on a busy machine.
    test('backfills the rollup from the charges recorded before it', async () => {
      const database = await kind.open({ migrated: false })
      try {
        const before = migrations.filter((migration) => migration.tag < '0004')
        await database.db.execute(sql`create table tollgate_migrations (tag text primary key, applied_at timestamptz not null default now())`)
        for (const migration of before) {
          for (const statement of migration.sql.split('--> statement-breakpoint')) if (statement.trim()) await database.db.execute(sql.raw(statement))
          await database.db.execute(sql`insert into tollgate_migrations (tag) values (${migration.tag})`)
        }
        await database.db.execute(sql`
          insert into ledger_entries (kind, amount, wallet_id, payer_type, account_id, key_id, user_sub, model, usage, uncollected, created_at) values
            ('charge', 100, 'w1', 'wallet', 'acct_1', 'key_1', null, 'm/a', '{"input_tokens": 10, "output_tokens": 3, "cache_read_tokens": 2}', 0, '2026-10-01T10:15:00Z'),
            ('charge', 50, 'w1', 'wallet', 'acct_1', 'key_1', null, 'm/a', '{"input_tokens": 5}', 7, '2026-10-01T10:45:00Z'),
            ('charge', 20, 'w1', 'wallet', 'acct_1', 'key_1', null, 'm/a', '{"input_tokens": "NaN", "output_tokens": -4, "invalid": true}', 0, '2026-10-01T11:00:00Z'),
            ('charge', 30, 'w2', 'user_allotment', null, null, 'alice', 'm/b', null, 0, '2026-10-02T00:00:00Z'),
            ('hold', 999, 'w1', 'wallet', 'acct_1', 'key_1', null, 'm/a', null, 0, '2026-10-01T10:15:00Z'),
            ('topup', 5000, 'w1', 'wallet', 'acct_1', null, null, null, null, 0, '2026-10-01T09:00:00Z')`)
        expect(await migrate(database.db)).toEqual(migrations.filter((migration) => migration.tag >= '0004').map((migration) => migration.tag))
        await expectRollupMatchesLedger(database.db)
        const rows = await queryRows<Record<string, string>>(
          database.db,
          sql`select to_char(hour at time zone 'UTC', 'YYYY-MM-DD HH24') as hour, account_id, user_sub, requests::text, input_tokens::text, output_tokens::text, cache_read_tokens::text, cost::text, uncollected::text
            from usage_rollups order by hour`,
        )
        expect(rows).toEqual([
          {
            hour: '2026-10-01 10',
            account_id: 'acct_1',
            user_sub: '',
            requests: '2',
            input_tokens: '15',
            output_tokens: '3',
            cache_read_tokens: '2',
            cost: '150',
            uncollected: '7',
          },
          {
            hour: '2026-10-01 11',
            account_id: 'acct_1',
            user_sub: '',
            requests: '1',
            input_tokens: '0',
            output_tokens: '0',
            cache_read_tokens: '0',
            cost: '20',
            uncollected: '0',
          },
          {
            hour: '2026-10-02 00',
            account_id: '',
            user_sub: 'alice',
            requests: '1',
            input_tokens: '0',
            output_tokens: '0',
            cache_read_tokens: '0',
            cost: '30',
            uncollected: '0',
          },
        ])
      } finally {
        await database.close()
      }
    }, 60_000)
  })
}
