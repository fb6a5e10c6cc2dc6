import { describe, expect, test } from 'bun:test'
import { is, type Query, SQL, sql } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { queryRows } from '../../src/db/rows'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

const dialect = new PgDialect()

/**
 * A busy wallet's next credit lease is taken while the current one still has credit, so the call
 * that uses the current one up finds its successor ready instead of waiting for the database
 * (docs/billing.md#credit-lease).
 */
for (const kind of testDatabases) {
  describe(`credit leases taken ahead (${kind.kind})`, () => {
    /** Calls the test has started so far, and the count when each lease take reached the database. */
    let callsStarted = 0
    const takesAtCall: number[] = []
    const watched =
      (database: FreshDatabase) =>
      <Row>(query: SQL | Query): Promise<Row[]> => {
        const text = (is(query, SQL) ? dialect.sqlToQuery(query) : query).sql
        if (text.includes('offer as (')) takesAtCall.push(callsStarted)
        return database.rows<Row>(query)
      }
    // The default configuration: credit leases.
    const suite = gatewaySuite(kind, { env: { TOLLGATE_CREDIT_LEASE: undefined }, handle: (database) => ({ rows: watched(database) }) })
    const upstream = suite.upstream

    test('each lease after the first is taken while its predecessor still serves calls; none is left open once the wallet is quiet', async () => {
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const { id: accountId } = await suite.harness.account(100)
      const { key } = await suite.harness.key({ account_id: accountId })
      const body = { model: 'test/cheap', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 100 }
      for (let call = 1; call <= 40; call++) {
        callsStarted = call
        expect((await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body })).status).toBe(200)
      }
      expect(await suite.harness.services.holds.landPending(5000)).toBe(true)

      // Which lease served each call, in the order the leases were taken.
      const charges = await queryRows<{ hold_id: string; calls: number }>(
        suite.database.db,
        sql`select l.hold_id, count(*)::int as calls from ledger_entries l join ledger_entries h on h.hold_id = l.hold_id and h.kind = 'hold'
            where l.account_id = ${accountId} and l.kind = 'charge' group by l.hold_id, h.id order by h.id`,
      )
      expect(charges.reduce((sum, lease) => sum + lease.calls, 0)).toBe(40)
      expect(charges.length).toBeGreaterThan(1)
      expect(takesAtCall.length).toBeGreaterThanOrEqual(charges.length)
      // The lease taken i-th reached the database during a call that the leases before it served.
      let servedBefore = 0
      for (let index = 1; index < charges.length; index++) {
        servedBefore += charges[index - 1]?.calls ?? 0
        expect(takesAtCall[index]).toBeLessThanOrEqual(servedBefore)
      }
      // A lease taken ahead and never drawn from goes back with the others once the wallet is quiet.
      await expectBooksBalance(suite.database.db)
    })
  })
}
