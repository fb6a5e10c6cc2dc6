import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'
import type { GatewayProcess } from '../support/process'
import { TcpProxy } from '../support/tcp-proxy'

// 10 input and 20 output tokens of test/cheap cost 50 micro-credits.
const chat = { model: 'test/cheap', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 100 }
const PRICE_MICROS = 50

const postgres = testDatabases.find((candidate) => candidate.kind === 'postgres')

/**
 * The outage of docs/billing.md#credit-lease as operators meet it: two gateway processes with
 * leases on Postgres, whose connections go through a relay that is cut for longer than the hold
 * TTL while calls go on; their sweepers run on their own timers.
 */
describe.skipIf(!postgres)('credit lease: two processes through an outage longer than the hold TTL', () => {
  const suite = gatewaySuite(postgres as NonNullable<typeof postgres>)
  const upstream = suite.upstream
  let proxy: TcpProxy

  beforeAll(() => {
    const target = new URL(suite.database.url ?? '')
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432)).start()
  })
  afterAll(() => proxy.stop())

  test.each(['cut', 'blackhole'] as const)(
    '%s: every call is answered within 5 s; each answered 200 is charged its full price after recovery, books exact',
    async (outage) => {
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const env = { DATABASE_URL: proxy.urlFor(suite.database.url ?? ''), TOLLGATE_HOLD_TTL_SECONDS: '2', TOLLGATE_WORKERS: '1' }
      const processes: GatewayProcess[] = await Promise.all([suite.process(env), suite.process(env)])
      const { key, accountId } = await suite.harness.key()
      let slowest = 0
      const send = (gateway: GatewayProcess | undefined, started = performance.now()) =>
        fetch(`${gateway?.url}v1/chat/completions`, {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: JSON.stringify(chat),
          signal: AbortSignal.timeout(20_000),
        })
          .then(async (response) => {
            await response.text()
            slowest = Math.max(slowest, performance.now() - started)
            return response.status
          })
          .catch(() => 0)
      const statuses: number[] = []
      let cut = false
      try {
        // Each process takes its lease.
        for (const gateway of processes) statuses.push(await send(gateway))
        expect(statuses).toEqual([200, 200])
        if (outage === 'cut') proxy.cut()
        else proxy.blackhole()
        cut = true
        slowest = 0
        const outageEnds = Date.now() + 5_000
        const during: Promise<number>[] = []
        for (let index = 0; Date.now() < outageEnds; index++) {
          during.push(send(processes[index % 2]))
          await Bun.sleep(25)
        }
        statuses.push(...(await Promise.all(during)))
        proxy.restore()
        cut = false
        expect(statuses.slice(2).filter((status) => status === 200).length).toBeGreaterThan(0)
        expect(statuses.slice(2).filter((status) => status !== 200 && status !== 503)).toEqual([])
        expect(slowest).toBeLessThan(5_000)

        // Every answered call's charge lands once the database is back.
        const answered = statuses.filter((status) => status === 200).length
        for (let waited = 0; waited < 40 && (await chargeCount(suite.database, accountId)) < answered; waited++) await Bun.sleep(500)
      } finally {
        try {
          if (cut) proxy.restore()
        } finally {
          await Promise.all(processes.map((gateway) => gateway.stop()))
        }
      }
      const answered = statuses.filter((status) => status === 200).length
      const charges = await charged(suite.database, accountId)
      expect(charges.length).toBe(answered)
      expect(charges.filter((charge) => charge.amount !== PRICE_MICROS || charge.uncollected !== 0)).toEqual([])
      const wallet = (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet).toEqual({ balance: 100 - (answered * PRICE_MICROS) / 1e6, held: 0, available: 100 - (answered * PRICE_MICROS) / 1e6 })
      await expectBooksBalance(suite.database.db)
    },
    90_000,
  )
})

async function charged(database: FreshDatabase, accountId: string): Promise<{ amount: number; uncollected: number }[]> {
  const result = await database.db.execute(
    sql`select amount::text as amount, uncollected::text as uncollected from ledger_entries where account_id = ${accountId} and kind = 'charge'`,
  )
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { amount: string; uncollected: string }[]
  return rows.map((row) => ({ amount: Number(row.amount), uncollected: Number(row.uncollected) }))
}

async function chargeCount(database: FreshDatabase, accountId: string): Promise<number> {
  return (await charged(database, accountId)).length
}
