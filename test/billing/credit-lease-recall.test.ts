import { describe, expect, test } from 'bun:test'
import { is, SQL, sql } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Payer } from '../../src/billing/payer'
import { NO_QUOTAS } from '../../src/billing/periods'
import { InsufficientBalanceError } from '../../src/errors/kinds'
import { type FreshDatabase, testDatabases } from '../support/databases'
import type { TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'
import { rejectionOf } from '../support/rejection'

const CREDIT = 1_000_000n

/**
 * Credit leases held by other instances (docs/billing.md#credit-lease): a call is refused for
 * want of credit only when the wallet truly cannot cover it. Several gateway instances share one
 * database here, each with its own hold book and leases, as separate processes would.
 */
for (const kind of testDatabases) {
  describe(`credit leases across instances (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { mockUpstream: false, gateway: false })
    const instance = (lease: string) => suite.instance({ env: { TOLLGATE_CREDIT_LEASE: lease } })

    async function walletPayer(gateway: TestGateway, credits: number): Promise<Payer> {
      const { id: accountId } = await gateway.account(credits)
      const result = await suite.database.db.execute(sql`select id from wallets where owner_id = ${accountId}`)
      const [row] = (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as { id: string }[]
      if (!row) throw new Error('the account has no wallet')
      return {
        type: 'wallet',
        walletId: row.id,
        ownerId: accountId,
        accountId,
        keyId: null,
        userSub: null,
        env: null,
        spenderId: null,
        quotas: NO_QUOTAS,
        tokensPerMinute: null,
      }
    }

    const request = (payer: Payer, amount: bigint, index = 0) => ({ payer, amount, requestId: `req_recall_${index}`, model: 'test/cheap', provider: 'a' })

    test("a lease on one instance does not refuse another instance's 9.5-credit call on a 10-credit wallet", async () => {
      const a = instance('1')
      const b = instance('1')
      const payer = await walletPayer(a, 10)
      // B serves a small call from a lease sized for eight such calls (0.88 credits, within the 1-credit cap) and keeps it.
      const small = await b.services.holds.take(request(payer, 110_000n, 1))
      await b.services.holds.settle(small, 110_000n, { output_tokens: 1 })
      expect(await b.services.holds.landPending(5000)).toBe(true)
      const held = (await a.admin('GET', `/accounts/${payer.ownerId}`)).json.wallet
      expect(held.held).toBeCloseTo(8 * 0.11 - 0.11, 9)

      const started = Date.now()
      const big = await a.services.holds.take(request(payer, (95n * CREDIT) / 10n, 2))
      // The refused call waited for B to give its lease back, within the bounded wait.
      expect(Date.now() - started).toBeLessThan(5000)
      expect(big.amount).toBe(9_500_000n)
      await a.services.holds.settle(big, big.amount, { output_tokens: 1 })
      expect(await a.services.holds.landPending(5000)).toBe(true)
      // What is left is less than the call: refused, after the bounded wait.
      const refusedAt = Date.now()
      expect(await rejectionOf(a.services.holds.take(request(payer, 500_000n, 3)))).toBeInstanceOf(InsufficientBalanceError)
      expect(Date.now() - refusedAt).toBeLessThan(5000)

      for (const gateway of [a, b]) await gateway.services.holds.drain(5000)
      const wallet = (await a.admin('GET', `/accounts/${payer.ownerId}`)).json.wallet
      expect(wallet).toEqual({ balance: 0.39, held: 0, available: 0.39 })
      await expectBooksBalance(suite.database.db)
    }, 30_000)

    test("a recall that finds the other instance's lease already given back tries the call once more instead of refusing it", async () => {
      const b = instance('1')
      const payer = await walletPayer(b, 10)
      // B keeps a lease of 0.77 credits, so A's 9.5-credit call is refused at first.
      const small = await b.services.holds.take(request(payer, 110_000n, 1))
      await b.services.holds.settle(small, 110_000n, { output_tokens: 1 })
      expect(await b.services.holds.landPending(5000)).toBe(true)
      // B gives its lease back just before A's recall reaches the database, as B does when a
      // refusal of its own comes first: the recall then finds no lease of another instance.
      let recalls = 0
      const rows: FreshDatabase['rows'] = async (query) => {
        if (is(query, SQL) && new PgDialect().sqlToQuery(query).sql.includes('set leases_recalled_at')) {
          recalls++
          await b.services.holds.drain(5000)
        }
        return suite.database.rows(query)
      }
      const a = suite.instance({ env: { TOLLGATE_CREDIT_LEASE: '1' }, handle: { rows } })
      const big = await a.services.holds.take(request(payer, (95n * CREDIT) / 10n, 2))
      expect(recalls).toBe(1)
      expect(big.amount).toBe(9_500_000n)
      await a.services.holds.settle(big, big.amount, { output_tokens: 1 })
      await a.services.holds.drain(5000)
      const wallet = (await a.admin('GET', `/accounts/${payer.ownerId}`)).json.wallet
      expect(wallet).toEqual({ balance: 0.39, held: 0, available: 0.39 })
      await expectBooksBalance(suite.database.db)
    }, 30_000)

    test("a lease nobody draws from goes back within about a second of the wallet's last call", async () => {
      const a = instance('1')
      const payer = await walletPayer(a, 10)
      const hold = await a.services.holds.take(request(payer, 110_000n, 1))
      await a.services.holds.settle(hold, 110_000n, { output_tokens: 1 })
      const ended = Date.now()
      let wallet = (await a.admin('GET', `/accounts/${payer.ownerId}`)).json.wallet
      while (wallet.held !== 0 && Date.now() - ended < 10_000) {
        await Bun.sleep(50)
        wallet = (await a.admin('GET', `/accounts/${payer.ownerId}`)).json.wallet
      }
      // Given back after 1 s idle, checked every 250 ms; the margin is for a busy machine.
      expect(Date.now() - ended).toBeLessThan(4000)
      expect(wallet).toEqual({ balance: 9.89, held: 0, available: 9.89 })
      await expectBooksBalance(suite.database.db, { openHolds: true })
    }, 30_000)

    test('three instances with 0.5-credit leases serve exactly as many concurrent calls as the wallet affords', async () => {
      const gateways = [instance('0.5'), instance('0.5'), instance('0.5')]
      const price = CREDIT / 100n
      const affordable = 248
      // Half a call more than 248 calls: the 249th cannot be covered.
      const payer = await walletPayer(gateways[0] as TestGateway, (affordable * 100 + 50) / 10_000)
      const call = async (gateway: TestGateway, index: number) => {
        try {
          const hold = await gateway.services.holds.take(request(payer, price, index))
          // The call runs a moment, then costs its whole hold.
          await Bun.sleep(20)
          await gateway.services.holds.settle(hold, price, { output_tokens: 1 })
          return 'served'
        } catch (error) {
          if (error instanceof InsufficientBalanceError) return 'refused'
          throw error
        }
      }
      // Two instances have taken leases; then most calls land on the third, as a load balancer may spread them.
      const [a, b, c] = gateways as [TestGateway, TestGateway, TestGateway]
      const warmUp = [await call(b, 0), await call(c, 1)]
      const outcomes = await Promise.all(Array.from({ length: 307 }, (_, index) => call(index % 10 === 0 ? b : index % 10 === 1 ? c : a, index + 2)))
      expect([...warmUp, ...outcomes].filter((outcome) => outcome === 'served')).toHaveLength(affordable)
      for (const gateway of gateways) await gateway.services.holds.drain(5000)
      const wallet = (await a.admin('GET', `/accounts/${payer.ownerId}`)).json.wallet
      expect(wallet).toEqual({ balance: 0.005, held: 0, available: 0.005 })
      await expectBooksBalance(suite.database.db)
    }, 60_000)
  })
}
