import { beforeAll, describe, expect, test } from 'bun:test'
import { is, type Query, SQL, sql } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { queryRows } from '../../src/db/rows'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { bearer, type TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

/**
 * A settlement commits and its answer is lost (the connection drops, or the statement passes
 * its deadline, after the commit): the retry finds the hold gone. It must count as landed, once,
 * not as a hold a sweep expired with its cost recorded again as uncollected
 * (docs/billing.md#database-outages).
 */
const dialect = new PgDialect()

for (const kind of testDatabases) {
  describe(`a settlement whose answer was lost (${kind.kind})`, () => {
    /** Closings to commit and then fail, as a connection lost after the commit does. */
    let answersToLose = 0
    const lossy =
      (database: FreshDatabase) =>
      <Row>(query: SQL | Query): Promise<Row[]> => {
        const text = (is(query, SQL) ? dialect.sqlToQuery(query) : query).sql
        // An exact hold's closing, or the charge of a call drawn from a credit lease.
        const closing = text.includes('delete from holds h using input') || text.includes('lease_totals as')
        if (!closing || answersToLose === 0) return database.rows<Row>(query)
        answersToLose--
        return database.rows<Row>(query).then(() => {
          throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })
        })
      }
    const suite = gatewaySuite(kind, { handle: (database) => ({ rows: lossy(database) }) })
    const upstream = suite.upstream
    /** The same in the default configuration: calls drawn from credit leases. */
    let leased: TestGateway
    beforeAll(() => {
      leased = suite.instance({ env: { TOLLGATE_CREDIT_LEASE: undefined } })
    })

    test('the retry finds the charge on the ledger: one charge entry, nothing uncollected, the books exact', async () => {
      const { key, accountId } = await suite.harness.key()
      upstream.script({ usage: { prompt_tokens: 40, completion_tokens: 7 } })
      answersToLose = 1
      const reply = await suite.harness.call('POST', '/v1/chat/completions', {
        headers: bearer(key),
        body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] },
      })
      expect(reply.status).toBe(200)
      expect(await suite.harness.services.holds.landPending(10_000)).toBe(true)
      expect(answersToLose).toBe(0)
      const entries = await queryRows<{ kind: string; amount: string; uncollected: string }>(
        suite.database.db,
        sql`select kind, amount::text as amount, uncollected::text as uncollected from ledger_entries where account_id = ${accountId} and kind = 'charge'`,
      )
      // 40 input x 1 + 7 output x 2 micro-credits.
      expect(entries).toEqual([{ kind: 'charge', amount: '54', uncollected: '0' }])
      const [rollup] = await queryRows<{ requests: string }>(
        suite.database.db,
        sql`select sum(requests)::text as requests from usage_rollups where account_id = ${accountId}`,
      )
      expect(rollup?.requests).toBe('1')
      await expectBooksBalance(suite.database.db)
    }, 30_000)

    test('a leased charge whose answer was lost is not charged again by the retry (its lease is still there): one charge entry, the books exact', async () => {
      const { key, accountId } = await leased.key()
      upstream.always({ usage: { prompt_tokens: 40, completion_tokens: 7 } })
      const send = () =>
        leased.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] } })
      // The first call takes the lease; the second's charge commits and its answer is lost.
      expect((await send()).status).toBe(200)
      expect(await leased.services.holds.landPending(10_000)).toBe(true)
      answersToLose = 1
      expect((await send()).status).toBe(200)
      expect(await leased.services.holds.landPending(10_000)).toBe(true)
      expect(answersToLose).toBe(0)
      const entries = await queryRows<{ request_id: string; amount: string }>(
        suite.database.db,
        sql`select request_id, amount::text as amount from ledger_entries where account_id = ${accountId} and kind = 'charge'`,
      )
      expect(entries.map((entry) => entry.amount)).toEqual(['54', '54'])
      expect(new Set(entries.map((entry) => entry.request_id)).size).toBe(2)
      const wallet = (await leased.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet.balance).toBeCloseTo(100 - 108 / 1e6, 9)
      await expectBooksBalance(suite.database.db)
    }, 30_000)
  })
}
