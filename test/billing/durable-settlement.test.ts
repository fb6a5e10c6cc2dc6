import { describe, expect, test } from 'bun:test'
import { type Query, type SQL, sql } from 'drizzle-orm'
import { queryRows } from '../../src/db/rows'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

/**
 * The database goes away while a call is being settled: the client still gets a whole answer
 * with its cost, the settlement is retried until the database is back, and the books end
 * exact. On Postgres the outage is a real one (a TCP proxy in front of the server is cut); the
 * embedded database has no network, so its billing statements are made to fail instead.
 */
for (const kind of testDatabases) {
  describe(`durable settlement (${kind.kind})`, () => {
    /** Billing statements that failed: a closing's first attempt and each of its retries during an outage. */
    let failedStatements = 0
    const counted =
      (database: FreshDatabase) =>
      <Row>(query: SQL | Query): Promise<Row[]> =>
        database.rows<Row>(query).catch((error: unknown) => {
          failedStatements++
          throw error
        })
    // A client waits 200 ms for its closing, and a closing is retried every 50 ms: the outage, not the defaults, sets the pace.
    const suite = gatewaySuite(kind, {
      interruptible: {},
      handle: (database) => ({ rows: counted(database) }),
      closings: { closingAnswerMs: 200, retryDelayMs: () => 50 },
    })
    const outage = {
      start: () => {
        failedStatements = 0
        suite.connection.cut()
      },
      end: () => suite.connection.restore(),
      /** Until the closing has failed and been retried (and failed again): the outage outlasts a retry. */
      async outlastARetry() {
        for (let waited = 0; failedStatements < 2 && waited < 10_000; waited += 10) await Bun.sleep(10)
      },
    }

    const heldOn = async (accountId: string) => {
      const [row] = await queryRows<{ held: string }>(
        suite.database.db,
        sql`select held::text as held from wallets where owner_id = ${accountId} and kind = 'wallet'`,
      )
      return BigInt(row?.held ?? '0')
    }

    test('a stream settled while the database is down: the client gets its cost, the charge lands when the database is back', async () => {
      const { key, accountId } = await suite.harness.key()
      suite.upstream.script({ text: 'one two three four five six seven', chunkDelayMs: 120, usage: { prompt_tokens: 40, completion_tokens: 7 } })
      const response = await suite.harness.gateway.handle(
        new Request('http://localhost/v1/chat/completions', {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'count' }], stream: true, stream_options: { include_usage: true } }),
        }),
      )
      expect(response.status).toBe(200)
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let text = decoder.decode((await reader.read()).value)
      outage.start()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          text += decoder.decode(value)
        }
        // A proper end of stream, its cost computed by the gateway: 40 input x 1 + 7 output x 2, per million.
        const cost = (40 * 1 + 7 * 2) / 1e6
        const payloads = text
          .split('\n\n')
          .filter((event) => event.startsWith('data: '))
          .map((event) => event.slice(6))
        expect(payloads.at(-1)).toBe('[DONE]')
        expect(JSON.parse(payloads.at(-2)!).usage.cost).toBe(cost)
        // Not settled yet: the hold is still open in the database.
        expect(await heldOn(accountId)).toBeGreaterThan(0n)
        await outage.outlastARetry()
      } finally {
        outage.end()
      }
      expect(await suite.harness.services.holds.drain(30_000)).toBe(true)
      expect(await heldOn(accountId)).toBe(0n)
      const ledger = (await suite.harness.admin('GET', `/ledger?account_id=${accountId}`)).json.data as { kind: string; amount: number }[]
      expect(ledger.map((entry) => entry.kind)).toEqual(['release', 'charge', 'hold', 'topup'])
      expect(ledger[1]!.amount).toBe((40 * 1 + 7 * 2) / 1e6)
      await expectBooksBalance(suite.database.db)
    }, 60_000)

    test('a release that fails during an outage is retried too: nothing is charged, the hold comes back', async () => {
      const { key, accountId } = await suite.harness.key()
      suite.upstream.script({ text: 'one two three four five six', chunkDelayMs: 120, cutAfterChunks: 3 })
      const response = await suite.harness.gateway.handle(
        new Request('http://localhost/v1/chat/completions', {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'count' }], stream: true }),
        }),
      )
      const reader = response.body!.getReader()
      await reader.read()
      outage.start()
      try {
        let text = ''
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          text += new TextDecoder().decode(value)
        }
        expect(text).toContain('"error"')
        expect(text).not.toContain('[DONE]')
        await outage.outlastARetry()
      } finally {
        outage.end()
      }
      expect(await suite.harness.services.holds.drain(30_000)).toBe(true)
      expect(await suite.harness.admin('GET', `/accounts/${accountId}`).then((reply) => reply.json.wallet)).toEqual({ balance: 100, held: 0, available: 100 })
      await expectBooksBalance(suite.database.db)
    }, 60_000)
  })
}
