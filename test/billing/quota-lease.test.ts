import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { queryRows } from '../../src/db/rows'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

// test/cheap is priced 1 credit per million input and 2 per million output tokens.
const chat = (maxTokens: number) => ({ model: 'test/cheap', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: maxTokens })

interface KeyMonth {
  held: number
  charged: number
}

/** A key's months as the quota counts them (key_spend rows of months: `YYYY-MM`), in credits. */
async function keyMonth(database: FreshDatabase, keyId: string): Promise<KeyMonth> {
  const [row] = await queryRows<{ held: string; charged: string }>(
    database.db,
    sql`select coalesce(sum(held), 0)::text as held, coalesce(sum(charged), 0)::text as charged from key_spend where key_id = ${keyId} and length(month) = 7`,
  )
  return { held: Number(row?.held ?? 0) / 1e6, charged: Number(row?.charged ?? 0) / 1e6 }
}

/**
 * A key with a monthly quota draws its calls from a credit lease of its own (the default), which
 * counts against its month like the holds it stands for: no database round trip on its calls'
 * path, and no quota ever passed, whatever the number of instances.
 */
for (const kind of testDatabases) {
  describe(`credit leases of keys with a monthly quota (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { env: { TOLLGATE_CREDIT_LEASE: undefined }, gateway: false })
    const upstream = suite.upstream
    const gateway = () => suite.instance()

    test("the key's calls draw from a lease of its own, counted in its month while open; what is not charged goes back to the month", async () => {
      const harness = gateway()
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const { key, id: keyId, accountId } = await harness.key({ monthly_quota: 1 })
      const send = () => harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(100) })
      expect((await send()).status).toBe(200)
      const replies = await Promise.all(Array.from({ length: 19 }, send))
      expect(replies.map((reply) => reply.status)).toEqual(Array(19).fill(200))
      expect(await harness.services.holds.landPending(5000)).toBe(true)

      const ledger = await queryRows<{ kind: string; hold_id: string | null; key_id: string | null }>(
        suite.database.db,
        sql`select kind, hold_id, key_id from ledger_entries where account_id = ${accountId} order by id`,
      )
      const holds = ledger.filter((entry) => entry.kind === 'hold')
      expect(holds.length).toBeGreaterThan(0)
      // Every hold is a lease, and it names the key: it is that key's alone.
      for (const hold of holds) expect(hold).toMatchObject({ hold_id: expect.stringMatching(/^lease_/), key_id: keyId })
      expect(ledger.filter((entry) => entry.kind === 'charge')).toHaveLength(20)
      // While the lease is open its unused part counts against the month, as a hold would.
      // One statement, one snapshot: a used-up lease may be given back between two reads.
      const [open] = await queryRows<{ held: string; charged: string; wallet_held: string }>(
        suite.database.db,
        sql`select s.held::text as held, s.charged::text as charged, w.held::text as wallet_held
            from key_spend s, wallets w where s.key_id = ${keyId} and length(s.month) = 7 and w.owner_id = ${accountId}`,
      )
      expect(Number(open?.charged)).toBe(20 * 50)
      expect(Number(open?.held)).toBeGreaterThan(0)
      expect(open?.held).toBe(open?.wallet_held)
      expect((await harness.call('GET', '/v1/wallet', { headers: bearer(key) })).json.key.month_spent).toBeCloseTo((20 * 50) / 1e6, 9)

      // Given back (idle, within 2 s): the month keeps only what was charged.
      await expectBooksBalance(suite.database.db)
      expect(await keyMonth(suite.database, keyId)).toEqual({ held: 0, charged: (20 * 50) / 1e6 })
    })

    test("a key's lease serves only the month it counts against: the first call of a new month takes a new lease, and each month keeps its own charges", async () => {
      let clock = Date.parse('2026-11-30T23:59:58Z')
      const harness = suite.instance({ now: () => clock })
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const { key, id: keyId } = await harness.key({ monthly_quota: 1 })
      const send = () => harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(100) })
      expect((await send()).status).toBe(200)
      expect((await send()).status).toBe(200)
      clock = Date.parse('2026-12-01T00:00:01Z')
      expect((await send()).status).toBe(200)
      expect(await harness.services.holds.drain(5000)).toBe(true)
      const months = await queryRows<{ month: string; held: string; charged: string }>(
        suite.database.db,
        sql`select month, held::text as held, charged::text as charged from key_spend where key_id = ${keyId} and length(month) = 7 order by month`,
      )
      expect(months).toEqual([
        { month: '2026-11', held: '0', charged: '100' },
        { month: '2026-12', held: '0', charged: '50' },
      ])
      const leases = await queryRows<{ n: number }>(
        suite.database.db,
        sql`select count(*)::int as n from ledger_entries where key_id = ${keyId} and kind = 'hold'`,
      )
      expect(leases[0]?.n).toBe(2)
      await expectBooksBalance(suite.database.db)
    })

    test('two instances, 200 calls at once on a key whose quota affords about 20 holds: exactly as many are served as exact holds would serve, and the quota is never passed', async () => {
      const [first, second] = [gateway(), gateway()]
      // Each answer costs more than its hold, so each success takes one whole hold of the quota.
      upstream.always({ delayMs: 30, usage: { prompt_tokens: 10_000, completion_tokens: 1000 } })
      const quota = 0.04
      const { key, id: keyId, accountId } = await first.key({ monthly_quota: quota, account_id: (await first.account(100)).id })
      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, index) =>
          (index % 2 === 0 ? first : second).call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(1000) }),
        ),
      )
      const statuses = replies.map((reply) => reply.status)
      expect(statuses.filter((status) => status !== 200 && status !== 403)).toEqual([])
      for (const reply of replies) if (reply.status === 403) expect(reply.json.error.code).toBe('api_key_quota_exceeded')
      for (const started of [first, second]) expect(await started.services.holds.landPending(5000)).toBe(true)
      const charges = await queryRows<{ amount: string }>(
        suite.database.db,
        sql`select amount::text as amount from ledger_entries where account_id = ${accountId} and kind = 'charge'`,
      )
      const holdAmount = Number(charges[0]?.amount ?? 0) / 1e6
      expect(holdAmount).toBeGreaterThan(0)
      expect(statuses.filter((status) => status === 200)).toHaveLength(Math.floor(quota / holdAmount + 1e-9))
      const month = await keyMonth(suite.database, keyId)
      expect(month.charged + month.held).toBeLessThanOrEqual(quota + 1e-9)
      await expectBooksBalance(suite.database.db)
      expect((await keyMonth(suite.database, keyId)).held).toBe(0)
    }, 60_000)
  })
}
