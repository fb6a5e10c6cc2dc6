import { afterEach, beforeAll, beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { chargeLapsedCallsAtomically } from '../../src/billing/lapsed-charges'
import type { Payer } from '../../src/billing/payer'
import { NO_QUOTAS, periodKeys } from '../../src/billing/periods'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { bearer, type TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import type { InterruptibleDatabase } from '../support/interruptible-database'
import { expectBooksBalance } from '../support/ledger-checks'

// test/cheap is priced 1 credit per million input and 2 per million output tokens: 10 in and 20 out cost 50 micro-credits.
const chat = { model: 'test/cheap', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 100 }
const PRICE = 50 / 1e6
const TTL_SECONDS = 8

interface Charge {
  amount: number
  uncollected: number
  hold_id: string | null
}

async function chargesOf(database: FreshDatabase, accountId: string): Promise<Charge[]> {
  const result = await database.db.execute(
    sql`select amount::text as amount, uncollected::text as uncollected, hold_id from ledger_entries where account_id = ${accountId} and kind = 'charge' order by id`,
  )
  const rows = (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as {
    amount: string
    uncollected: string
    hold_id: string | null
  }[]
  return rows.map((row) => ({ amount: Number(row.amount) / 1e6, uncollected: Number(row.uncollected) / 1e6, hold_id: row.hold_id }))
}

/**
 * Two instances on one database, both cut off from it for longer than the hold TTL while one of
 * them keeps answering calls from its credit lease (docs/billing.md#credit-lease). The clock is
 * the test's, so the TTL passes without waiting for it.
 */
for (const kind of testDatabases) {
  describe(`credit lease through an outage longer than the hold TTL (${kind.kind})`, () => {
    let clock = Date.now()
    const suite = gatewaySuite(kind, {
      env: { TOLLGATE_CREDIT_LEASE: undefined, TOLLGATE_HOLD_TTL_SECONDS: String(TTL_SECONDS) },
      gateway: false,
      now: () => clock,
    })
    const upstream = suite.upstream
    // Each instance reaches the database through a connection of its own, which the test cuts and restores.
    let ownerConnection: InterruptibleDatabase
    let otherConnection: InterruptibleDatabase
    let owner: TestGateway
    let other: TestGateway

    beforeAll(async () => {
      ownerConnection = await suite.cuttableConnection()
      otherConnection = await suite.cuttableConnection()
    })
    // Each test has its own two instances (a drained one takes no more leases).
    beforeEach(() => {
      owner = suite.instance({ handle: ownerConnection.handle })
      other = suite.instance({ handle: otherConnection.handle })
    })
    afterEach(() => {
      owner.services.close()
      other.services.close()
    })

    test('every call answered during the outage is charged its full price once the database is back; books exact', async () => {
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const { key, accountId } = await owner.key()
      const send = () => owner.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat })
      // A burst takes leases, each larger than the last (lease-sizing.ts): the one left holds more than the 20 calls below.
      const burst = await Promise.all(Array.from({ length: 30 }, send))
      expect(burst.map((reply) => reply.status)).toEqual(Array(30).fill(200))
      expect(await owner.services.holds.landPending(5000)).toBe(true)
      // The leases it used up are given back once their calls end: only the current one stays open.
      for (let tries = 0; tries < 100 && (await countOpen(suite.database, accountId)) > 1; tries++) await Bun.sleep(20)
      expect(await countOpen(suite.database, accountId)).toBe(1)

      const logged = spyOn(console, 'error').mockImplementation(() => {})
      let answered = burst.length
      try {
        ownerConnection.cut()
        otherConnection.cut()
        // Both sweeps fail while the database is away.
        await Promise.all([owner.services.sweeper.tick(), other.services.sweeper.tick()])
        const replies = await Promise.all(Array.from({ length: 20 }, send))
        expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200))
        answered += replies.length
        // The outage outlasts the TTL: the lease's expiry in the database passes.
        clock += (TTL_SECONDS + 6) * 1000
        await Promise.all([owner.services.sweeper.tick(), other.services.sweeper.tick()])
      } finally {
        otherConnection.restore()
        logged.mockRestore()
      }
      // The other instance is back first and sweeps before the owner has renewed its lease or landed its charges.
      await other.services.sweeper.tick()
      ownerConnection.restore()
      await owner.services.sweeper.tick()
      expect(await owner.services.holds.landPending(30_000)).toBe(true)

      const charges = await chargesOf(suite.database, accountId)
      expect(charges).toHaveLength(answered)
      expect(charges.filter((charge) => charge.amount !== PRICE || charge.uncollected !== 0)).toEqual([])
      // The lease outlived the outage: its owner renewed it before any sweep expired it, and every charge names a lease.
      expect(charges.filter((charge) => !charge.hold_id?.startsWith('lease_'))).toEqual([])
      await expectBooksBalance(suite.database.db, { openHolds: true })
      expect(await owner.services.holds.drain(10_000)).toBe(true)
      const wallet = (await owner.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet).toEqual({ balance: 100 - answered * PRICE, held: 0, available: 100 - answered * PRICE })
      await expectBooksBalance(suite.database.db)
    }, 60_000)

    test('a sweep that never saw the outage still expires a lease its owner stopped renewing; the charges drawn from it are taken from the wallet', async () => {
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const { key, accountId } = await owner.key()
      const send = () => owner.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat })
      expect((await send()).status).toBe(200)
      expect(await owner.services.holds.landPending(5000)).toBe(true)

      const logged = spyOn(console, 'error').mockImplementation(() => {})
      let answered = 1
      try {
        ownerConnection.cut()
        const replies = await Promise.all(Array.from({ length: 5 }, send))
        expect(replies.map((reply) => reply.status)).toEqual(Array(5).fill(200))
        answered += replies.length
        // Only the owner is cut off: past the TTL, the other instance's sweep expires its lease.
        clock += (TTL_SECONDS + 1) * 1000
        await other.services.sweeper.tick()
        expect(await countOpen(suite.database, accountId)).toBe(0)
      } finally {
        ownerConnection.restore()
        logged.mockRestore()
      }
      // A lease whose renewal the owner cannot confirm draws no more: the next call takes a new one.
      expect((await send()).status).toBe(200)
      answered++
      expect(await owner.services.holds.landPending(30_000)).toBe(true)

      const charges = await chargesOf(suite.database, accountId)
      expect(charges).toHaveLength(answered)
      expect(charges.filter((charge) => charge.amount !== PRICE || charge.uncollected !== 0)).toEqual([])
      // The calls drawn from the expired lease name no hold: the lease's own entries balance without them.
      expect(charges.filter((charge) => charge.hold_id === null)).toHaveLength(5)
      expect(await owner.services.holds.drain(10_000)).toBe(true)
      const wallet = (await owner.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet).toEqual({ balance: 100 - answered * PRICE, held: 0, available: 100 - answered * PRICE })
      await expectBooksBalance(suite.database.db)
    }, 60_000)

    test("charges whose lease expired take only what the wallet's available credit covers; the rest is uncollected", async () => {
      // 120 micro-credits available; 30 more are held by an open call of the same wallet.
      const { id: accountId } = await owner.account(150 / 1e6)
      const [wallet] = rowsOf<{ id: string }>(await suite.database.db.execute(sql`select id from wallets where owner_id = ${accountId}`))
      if (!wallet) throw new Error('the account has no wallet')
      const payer: Payer = {
        type: 'wallet',
        walletId: wallet.id,
        ownerId: accountId,
        accountId,
        keyId: null,
        userSub: null,
        env: null,
        spenderId: null,
        quotas: NO_QUOTAS,
        tokensPerMinute: null,
      }
      const open = await other.services.holds.take({ payer, amount: 30n, requestId: 'req_open', model: 'test/cheap', provider: 'a' })
      const lapsed = (requestId: string) => ({
        leaseId: 'lease_gone',
        payer,
        requestId,
        sessionId: null,
        periods: periodKeys(new Date()),
        cost: 70n,
        charged: 50n,
        usage: { input_tokens: 1 },
        model: 'test/cheap',
        provider: 'a',
      })
      const now = new Date()
      const collected = await chargeLapsedCallsAtomically(suite.database, [lapsed('req_1'), lapsed('req_2'), lapsed('req_3')], now)
      expect(collected).toEqual([50n, 50n, 20n])
      const charges = await chargesOf(suite.database, accountId)
      expect(charges).toEqual([
        { amount: 50 / 1e6, uncollected: 20 / 1e6, hold_id: null },
        { amount: 50 / 1e6, uncollected: 20 / 1e6, hold_id: null },
        { amount: 20 / 1e6, uncollected: 50 / 1e6, hold_id: null },
      ])
      // The open call's hold is untouched: the wallet never goes below what it holds.
      expect((await owner.admin('GET', `/accounts/${accountId}`)).json.wallet).toEqual({ balance: 30 / 1e6, held: 30 / 1e6, available: 0 })
      await other.services.holds.release(open)
      await expectBooksBalance(suite.database.db)
    })
  })
}

function rowsOf<Row>(result: unknown): Row[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Row[]
}

async function countOpen(database: FreshDatabase, accountId: string): Promise<number> {
  const result = await database.db.execute(sql`select count(*)::int as n from holds where account_id = ${accountId}`)
  const rows = (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as { n: number }[]
  return rows[0]?.n ?? -1
}
