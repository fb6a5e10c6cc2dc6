import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { Batcher } from '../../src/billing/batcher'
import type { HoldRequest } from '../../src/billing/hold'
import { queryRows } from '../../src/db/rows'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

describe('group commit keeps its members apart', () => {
  test('a batch that fails on one member is written again one by one: only that member fails', async () => {
    const writes: number[][] = []
    const batcher = new Batcher<number, string>(
      async (items) => {
        writes.push(items)
        if (items.includes(13)) throw Object.assign(new Error('value out of range'), { code: '22003' })
        return items.map((item) => `ok ${item}`)
      },
      500,
      1,
    )
    const outcomes = await Promise.allSettled([1, 2, 13, 4].map((item) => batcher.submit(item)))
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled').map((outcome) => outcome.value)).toEqual(['ok 1', 'ok 2', 'ok 4'])
    // First alone (the batcher was idle), then the three that queued meanwhile, then each of those alone.
    expect(writes).toEqual([[1], [2, 13, 4], [2], [13], [4]])
  })

  test('an outage fails the batch at once, without one retry per member', async () => {
    let writes = 0
    const batcher = new Batcher<number, string>(
      async () => {
        writes++
        throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
      },
      500,
      1,
    )
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((item) => batcher.submit(item)))
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true)
    expect(writes).toBe(2)
  })
})

for (const kind of testDatabases) {
  describe(`holds: one request the database refuses cannot fail another (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)

    async function payerOf(options: Record<string, unknown> = {}) {
      const { id: keyId, key } = await suite.harness.key(options)
      const caller = await suite.harness.services.authenticator.authenticate(
        { method: 'POST', path: '/v1/chat/completions', credentials: 'bearer', scope: 'chat' },
        new Headers({ authorization: `Bearer ${key}` }),
      )
      return { keyId, payer: await suite.harness.services.payers.payerFor(caller) }
    }

    for (const path of ['statement', 'locking'] as const) {
      test(`a refused member among 200 in the ${path} path`, async () => {
        // A key with a monthly quota takes the locking path; one without, the single statement.
        const { payer } = await payerOf(path === 'locking' ? { monthly_quota: 1000 } : {})
        const request = (index: number): HoldRequest => ({
          payer,
          amount: 1000n,
          requestId: `req_${index}`,
          // Postgres text cannot hold NUL: the statement carrying it fails, as any value the database refuses would.
          model: index === 100 ? 'poison\u0000model' : 'test/cheap',
          provider: 'a',
        })
        const outcomes = await Promise.allSettled(Array.from({ length: 200 }, (_, index) => suite.harness.services.holds.take(request(index))))
        expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(1)
        expect(outcomes[100]!.status).toBe('rejected')
        const [open] = await queryRows<{ n: number }>(suite.database.db, sql`select count(*)::int as n from holds where wallet_id = ${payer.walletId}`)
        expect(open!.n).toBe(199)
        await Promise.all(outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [suite.harness.services.holds.release(outcome.value)] : [])))
        await expectBooksBalance(suite.database.db)
      }, 60_000)
    }
  })
}
