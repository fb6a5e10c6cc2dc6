import { describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { ledgerEntries } from '../../src/db/schema'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'
import type { GatewayProcess } from '../support/process'

const hi = [{ role: 'user', content: 'Say hi.' }]
// test/cheap with max_tokens 1000: a worst case near 0.002 credits; 0.04 affords about 20 at once.
const WALLET = 0.04
const body = JSON.stringify({ model: 'test/cheap', messages: hi, max_tokens: 1000 })

async function fire(count: number, send: (index: number) => Promise<Response>) {
  const responses = await Promise.all(Array.from({ length: count }, (_, index) => send(index)))
  const statuses = responses.map((response) => response.status)
  await Promise.all(responses.map((response) => response.text()))
  return statuses
}

/**
 * Each answer costs more than its hold, so each success takes exactly one hold from the wallet:
 * exactly floor(wallet / hold) requests can succeed, however they interleave.
 */
function expectExactlyAffordable(statuses: number[], holdAmount: number) {
  expect(statuses.filter((status) => status !== 200 && status !== 402)).toEqual([])
  expect(statuses.filter((status) => status === 200)).toHaveLength(Math.floor(WALLET / holdAmount + 1e-9))
}

async function holdAmountOf(db: FreshDatabase['db']): Promise<number> {
  const [hold] = await db.select({ amount: ledgerEntries.amount }).from(ledgerEntries).where(eq(ledgerEntries.kind, 'hold')).limit(1)
  return Number(hold!.amount) / 1e6
}

for (const kind of testDatabases) {
  describe(`no overspending under concurrency (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)
    const upstream = suite.upstream

    test('200 concurrent requests on a wallet that affords about 20 holds', async () => {
      // Answers arrive late and cost the whole hold, so holds overlap and the wallet runs dry.
      upstream.always({ delayMs: 40, usage: { prompt_tokens: 10_000, completion_tokens: 1000 } })
      const harness = suite.harness
      const { id: accountId } = await harness.account(WALLET)
      const { key } = await harness.key({ account_id: accountId })
      const statuses = await fire(200, () =>
        harness.gateway.handle(
          new Request('http://localhost/v1/chat/completions', { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body }),
        ),
      )
      expectExactlyAffordable(statuses, await holdAmountOf(suite.database.db))
      const wallet = (await harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet.balance).toBeGreaterThanOrEqual(0)
      expect(wallet.held).toBe(0)
      const charges = (await harness.admin('GET', `/ledger?account_id=${accountId}&limit=1000`)).json.data.filter(
        (entry: { kind: string }) => entry.kind === 'charge',
      )
      expect(charges).toHaveLength(statuses.filter((status) => status === 200).length)
      // Everything charged came out of the wallet: top-up minus charges is the balance, never below zero.
      const total = charges.reduce((sum: number, entry: { amount: number }) => sum + entry.amount, 0)
      expect(total).toBeLessThanOrEqual(WALLET)
      expect(wallet.balance).toBeCloseTo(WALLET - total, 6)
      await expectBooksBalance(suite.database.db)
    }, 60_000)

    if (kind.kind === 'postgres') {
      test('the same with two gateway processes on one database', async () => {
        upstream.always({ delayMs: 40, usage: { prompt_tokens: 10_000, completion_tokens: 1000 } })
        const processes: GatewayProcess[] = await Promise.all([suite.process(), suite.process()])
        try {
          const admin = (url: string, path: string, payload: unknown) =>
            fetch(`${url}admin/v1${path}`, { method: 'POST', headers: bearer(ADMIN_TOKEN), body: JSON.stringify(payload) }).then(
              (response) => response.json() as Promise<any>,
            )
          const account = await admin(processes[0]!.url, '/accounts', { name: 'two processes' })
          await admin(processes[1]!.url, `/accounts/${account.id}/credits`, { amount: WALLET })
          const { key } = await admin(processes[0]!.url, '/keys', { account_id: account.id, env: 'prod' })
          const statuses = await fire(200, (index) =>
            fetch(`${processes[index % 2]!.url}v1/chat/completions`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body }),
          )
          expectExactlyAffordable(statuses, await holdAmountOf(suite.database.db))
          await expectBooksBalance(suite.database.db)
        } finally {
          await Promise.all(processes.map((gateway) => gateway.stop()))
        }
      }, 120_000)
    }
  })
}
