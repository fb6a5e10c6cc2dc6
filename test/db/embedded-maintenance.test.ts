import { beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { CHURNING_TABLES, EmbeddedMaintenance } from '../../src/db/embedded-maintenance'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * The embedded database runs no autovacuum: the gateway vacuums the tables that churn itself
 * (src/db/embedded-maintenance.ts). Measured on the holds table with exact holds, where every
 * call inserts a row and its settlement deletes it: without a vacuum, each call's row keeps its
 * space; with one between two rounds of calls, the second round reuses the first's.
 */
describe('embedded database maintenance', () => {
  const suite = gatewaySuite(testDatabases[0]!)
  let key: string
  const heapPages = async () => {
    const [row] = await suite.database.rows<{ pages: number }>(sql`select (pg_relation_size('holds') / current_setting('block_size')::int)::int as pages`)
    return Number(row?.pages)
  }
  const calls = async (count: number) => {
    for (let sent = 0; sent < count; sent += 50) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, () =>
          suite.harness.call('POST', '/v1/chat/completions', {
            headers: bearer(key),
            body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
          }),
        ),
      )
      expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 200))
    }
  }

  beforeAll(async () => {
    expect(suite.database.kind).toBe('pglite')
    suite.upstream.always({ usage: { prompt_tokens: 3, completion_tokens: 2 } })
    ;({ key } = await suite.harness.key())
  })

  test('a closed hold keeps its space until a vacuum; after one, the next calls reuse it', async () => {
    const maintenance = new EmbeddedMaintenance(suite.database.db)
    await maintenance.run()
    const before = await heapPages()
    await calls(600)
    const grown = await heapPages()
    // No autovacuum ran meanwhile: 600 closed holds take pages of their own.
    expect(grown).toBeGreaterThan(before + 5)
    await maintenance.run()
    await calls(600)
    // The second round fits in the room the vacuum made.
    expect(await heapPages()).toBeLessThanOrEqual(grown + 1)
  }, 60_000)

  test('every churning table exists and a pass vacuums and analyses each', async () => {
    await new EmbeddedMaintenance(suite.database.db).run()
    const rows = await suite.database.rows<{ relname: string; vacuumed: boolean; analyzed: boolean }>(
      sql`select relname, last_vacuum is not null as vacuumed, last_analyze is not null as analyzed from pg_stat_user_tables`,
    )
    const seen = new Map(rows.map((row) => [row.relname, row]))
    for (const table of CHURNING_TABLES) expect({ table, ...seen.get(table) }).toEqual({ table, relname: table, vacuumed: true, analyzed: true })
  })
})
