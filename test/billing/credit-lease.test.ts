import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { expireHoldsPage } from '../../src/billing/sweep-statements'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'
import { mockCatalogEnv } from '../support/mock-catalog'
import { type GatewayProcess, startGatewayProcess } from '../support/process'
import { MockUpstream } from '../upstream/mock-upstream'

// test/cheap is priced 1 credit per million input and 2 per million output tokens.
const chat = (maxTokens: number) => ({ model: 'test/cheap', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: maxTokens })

interface Entry {
  kind: string
  amount: number
  hold_id: string | null
  request_id: string | null
  uncollected: number
}

/** The account's ledger as stored (the admin API does not show which hold an entry closes), amounts in credits. */
async function ledgerOf(database: FreshDatabase, accountId: string): Promise<Entry[]> {
  const stored = await rows(
    database,
    sql`select kind, amount::text as amount, hold_id, request_id, uncollected::text as uncollected from ledger_entries where account_id = ${accountId} order by id`,
  )
  return stored.map((row) => ({
    kind: String(row.kind),
    amount: Number(row.amount) / 1e6,
    hold_id: row.hold_id === null ? null : String(row.hold_id),
    request_id: row.request_id === null ? null : String(row.request_id),
    uncollected: Number(row.uncollected ?? 0) / 1e6,
  }))
}

async function rows(database: FreshDatabase, query: ReturnType<typeof sql>): Promise<Record<string, unknown>[]> {
  const result = await database.db.execute(query)
  return (Array.isArray(result) ? result : (result as unknown as { rows: Record<string, unknown>[] }).rows) as Record<string, unknown>[]
}

for (const kind of testDatabases) {
  describe(`credit lease (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { env: { TOLLGATE_CREDIT_LEASE: '1' } })
    const upstream = suite.upstream

    const call = (key: string, maxTokens = 100) => suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(maxTokens) })

    test('calls on a wallet draw from leases sized to it: a hold entry each, a charge per call naming one, the rest released when they are given back', async () => {
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const { id: accountId } = await suite.harness.account(100)
      const { key, id: keyId } = await suite.harness.key({ account_id: accountId })
      const first = await call(key)
      expect(first.status).toBe(200)
      const replies = [first, ...(await Promise.all(Array.from({ length: 29 }, () => call(key))))]
      expect(replies.map((reply) => reply.status)).toEqual(Array(30).fill(200))
      // Each answer carries the cost its charge took: (10 * 1 + 20 * 2) / 1e6.
      for (const reply of replies) expect(reply.json.usage.cost).toBe(50 / 1e6)

      // Charges drawn from a lease land just after their answers.
      expect(await suite.harness.services.holds.landPending(5000)).toBe(true)
      let ledger = await ledgerOf(suite.database, accountId)
      const holds = ledger.filter((entry) => entry.kind === 'hold')
      // No call held on its own: every hold is a lease, the first one sized for a few calls like
      // the first (lease-sizing.ts), far below the 1-credit cap, and none above the cap.
      expect(holds.length).toBeGreaterThan(0)
      for (const hold of holds) expect(hold.hold_id).toMatch(/^lease_/)
      const firstHold = holds[0]?.amount ?? 0
      expect(firstHold).toBeLessThan(0.01)
      for (const hold of holds) expect(hold.amount).toBeLessThanOrEqual(1)
      // While leases are open the wallet holds them; calls added nothing of their own.
      let wallet = (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet.balance).toBeCloseTo(100 - (30 * 50) / 1e6, 9)
      const charges = ledger.filter((entry) => entry.kind === 'charge')
      expect(charges).toHaveLength(30)
      const leaseIds = new Set(holds.map((entry) => entry.hold_id))
      for (const charge of charges) expect(leaseIds.has(charge.hold_id)).toBe(true)
      expect(new Set(charges.map((entry) => entry.request_id)).size).toBe(30)
      // The key's month and the usage summary see every call.
      const usage = (await suite.harness.admin('GET', `/usage?group_by=month&key_id=${keyId}`)).json.data
      expect(usage).toMatchObject([{ requests: 30, input_tokens: 300, output_tokens: 600 }])
      expect((await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key) })).json.key.month_spent).toBeCloseTo((30 * 50) / 1e6, 9)

      await suite.harness.services.holds.drain(5000)
      wallet = (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet).toEqual({ balance: 100 - (30 * 50) / 1e6, held: 0, available: 100 - (30 * 50) / 1e6 })
      // Each lease reconciles: its hold is its charges plus what was released of it.
      ledger = await ledgerOf(suite.database, accountId)
      for (const hold of holds) {
        const closing = ledger.filter((entry) => entry.hold_id === hold.hold_id && (entry.kind === 'charge' || entry.kind === 'release'))
        expect(closing.reduce((sum, entry) => sum + entry.amount, 0)).toBeCloseTo(hold.amount, 9)
      }
      await expectBooksBalance(suite.database.db)
    })

    test('a failed call goes back to the lease unbilled; a cost beyond the draw is recorded uncollected', async () => {
      const fresh = suite.instance()
      try {
        const { key, accountId } = await fresh.key()
        upstream.always({ kind: 'error', status: 500 })
        expect((await fresh.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(100) })).status).toBe(502)
        // max_tokens 10 holds 20 output micro-credits and the input estimate; the answer reports about three times the hold.
        upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 40 } })
        const over = await fresh.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(10) })
        expect(over.status).toBe(200)
        await fresh.services.holds.drain(5000)
        const ledger = await ledgerOf(suite.database, accountId)
        const charges = ledger.filter((entry) => entry.kind === 'charge')
        expect(charges).toHaveLength(1)
        expect(charges[0]?.uncollected).toBeGreaterThan(0)
        expect(charges[0]?.amount).toBe(over.json.usage.cost)
        const wallet = (await fresh.admin('GET', `/accounts/${accountId}`)).json.wallet
        expect(wallet).toEqual({ balance: 100 - over.json.usage.cost, held: 0, available: 100 - over.json.usage.cost })
        await expectBooksBalance(suite.database.db)
      } finally {
        fresh.services.close()
      }
    })

    test('a low wallet is held exactly: leases shrink to nothing, and no call is refused that exact holds would take', async () => {
      // max_tokens 1000 holds about 0.002 credits; a lease takes at most 1/8 of what is available.
      upstream.always({ delayMs: 30, usage: { prompt_tokens: 10_000, completion_tokens: 1000 } })
      const { id: accountId } = await suite.harness.account(0.04)
      const { key } = await suite.harness.key({ account_id: accountId })
      const statuses = (await Promise.all(Array.from({ length: 100 }, () => call(key, 1000)))).map((reply) => reply.status)
      expect(statuses.filter((status) => status !== 200 && status !== 402)).toEqual([])
      const ledger = await ledgerOf(suite.database, accountId)
      const exact = ledger.filter((entry) => entry.kind === 'hold' && entry.hold_id?.startsWith('hold_'))
      expect(exact.length).toBeGreaterThan(0)
      // Every call costs more than its hold, so each success took one whole hold: as many succeed as the wallet affords.
      const holdAmount = exact[0]?.amount ?? 1
      expect(statuses.filter((status) => status === 200)).toHaveLength(Math.floor(0.04 / holdAmount + 1e-9))
      await suite.harness.services.holds.drain(5000)
      const wallet = (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet.held).toBe(0)
      expect(wallet.balance).toBeGreaterThanOrEqual(0)
      await expectBooksBalance(suite.database.db)
    }, 30_000)

    test('a lease a sweep expired (its instance stalled past the TTL): the charge drawn from it is taken from the wallet, the next call takes a new lease', async () => {
      const fresh = suite.instance()
      try {
        upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
        const { key, accountId } = await fresh.key()
        const send = () => fresh.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(100) })
        expect((await send()).status).toBe(200)
        expect(await fresh.services.holds.landPending(5000)).toBe(true)
        // Another instance's sweep finds the lease stale and gives it back.
        expect(await expireHoldsPage(suite.database, { now: new Date(), everyOpenHold: true, pageSize: 100 })).toBeGreaterThanOrEqual(1)
        const lapsed = await send()
        expect(lapsed.status).toBe(200)
        expect(await fresh.services.holds.landPending(5000)).toBe(true)
        expect((await send()).status).toBe(200)
        await fresh.services.holds.drain(5000)
        const ledger = await ledgerOf(suite.database, accountId)
        const leases = ledger.filter((entry) => entry.kind === 'hold').map((entry) => entry.hold_id)
        expect(leases).toHaveLength(2)
        const charges = ledger.filter((entry) => entry.kind === 'charge')
        // Every call paid: the one drawn from the expired lease from the wallet's available credit, naming no hold.
        expect(charges.map((entry) => [entry.amount, entry.uncollected])).toEqual([
          [50 / 1e6, 0],
          [50 / 1e6, 0],
          [50 / 1e6, 0],
        ])
        expect(charges.map((entry) => entry.hold_id)).toEqual([leases[0] ?? '', null, leases[1] ?? ''])
        const wallet = (await fresh.admin('GET', `/accounts/${accountId}`)).json.wallet
        expect(wallet).toEqual({ balance: 100 - (3 * 50) / 1e6, held: 0, available: 100 - (3 * 50) / 1e6 })
        await expectBooksBalance(suite.database.db)
      } finally {
        fresh.services.close()
      }
    })

    if (kind.kind === 'postgres') {
      test('two processes leasing one small wallet never take it below zero', async () => {
        upstream.always({ delayMs: 30, usage: { prompt_tokens: 10_000, completion_tokens: 1000 } })
        const env = { TOLLGATE_WORKERS: '1' }
        const processes: GatewayProcess[] = await Promise.all([suite.process(env), suite.process(env)])
        try {
          const { key } = await suite.harness.key({ account_id: (await suite.harness.account(0.04)).id })
          const statuses = await Promise.all(
            Array.from({ length: 200 }, (_, index) =>
              fetch(`${processes[index % 2]?.url}v1/chat/completions`, {
                method: 'POST',
                headers: { ...bearer(key), 'content-type': 'application/json' },
                body: JSON.stringify(chat(1000)),
              }).then(async (response) => {
                await response.text()
                return response.status
              }),
            ),
          )
          expect(statuses.filter((status) => status !== 200 && status !== 402)).toEqual([])
          expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(0)
          // While both still hold leases: no wallet below what it holds, every balance on the ledger.
          await expectBooksBalance(suite.database.db, { openHolds: true })
        } finally {
          await Promise.all(processes.map((gateway) => gateway.stop()))
        }
        await expectBooksBalance(suite.database.db)
      }, 60_000)
    }
  })
}

for (const kind of testDatabases) {
  describe(`the default configuration never calls an upstream for a key without funds (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { env: { TOLLGATE_CREDIT_LEASE: undefined } })

    test('an empty wallet, and one short of a call, are refused with 402 before any upstream call, on every surface, however many calls come at once; a funded call shows in the wallet at once', async () => {
      suite.upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      // test/cheap with max_tokens 1000 holds about 0.002 credits: 0.001 cannot cover one.
      for (const credits of [0, 0.001]) {
        const { id: accountId } = await suite.harness.account(credits)
        const { key } = await suite.harness.key({ account_id: accountId })
        const before = suite.upstream.received.length
        const replies = await Promise.all(
          Array.from({ length: 10 }, (_, index) =>
            index % 2 === 0
              ? suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(1000) })
              : suite.harness.call('POST', '/v1/messages', {
                  headers: { 'x-api-key': key },
                  body: { model: 'claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] },
                }),
          ),
        )
        expect(replies.map((reply) => reply.status)).toEqual(Array(10).fill(402))
        expect(suite.upstream.received.length).toBe(before)
      }
      // A funded key on the same gateway is served, from a lease, and its wallet read right after
      // the answer shows the charge, though it lands a few milliseconds after the answer.
      const { key } = await suite.harness.key()
      const served = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(1000) })
      expect(served.status).toBe(200)
      const wallet = (await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key) })).json
      expect(wallet.balance).toBeCloseTo(100 - served.json.usage.cost, 9)
      expect(wallet.key.month_spent).toBeCloseTo(served.json.usage.cost, 9)
      await expectBooksBalance(suite.database.db)
    })
  })
}

for (const kind of testDatabases) {
  describe(`credit lease during a database outage (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { interruptible: {}, env: { TOLLGATE_CREDIT_LEASE: undefined } })

    test('calls drawn from a lease are answered while the database is away; their charges land when it is back', async () => {
      const { key, accountId } = await suite.harness.key()
      suite.upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const send = () => suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat(100) })
      // The first call takes the lease: a wallet's first lease covers eight calls like it.
      expect((await send()).status).toBe(200)
      expect(await suite.harness.services.holds.landPending(5000)).toBe(true)
      suite.connection.cut()
      try {
        const replies = await Promise.all(Array.from({ length: 7 }, send))
        expect(replies.map((reply) => reply.status)).toEqual(Array(7).fill(200))
        for (const reply of replies) expect(reply.json.usage.cost).toBe(50 / 1e6)
        // The lease is used up: the next call needs the database, which is away.
        expect((await send()).status).toBe(503)
        await Bun.sleep(500)
      } finally {
        suite.connection.restore()
      }
      expect(await suite.harness.services.holds.drain(30_000)).toBe(true)
      const charges = (await ledgerOf(suite.database, accountId)).filter((entry) => entry.kind === 'charge')
      expect(charges).toHaveLength(8)
      const wallet = (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet).toEqual({ balance: 100 - (8 * 50) / 1e6, held: 0, available: 100 - (8 * 50) / 1e6 })
      await expectBooksBalance(suite.database.db)
    }, 60_000)
  })
}

/**
 * What a crash costs with leases, in the default configuration (docs/billing.md#credit-lease):
 * calls whose charges landed are charged; calls answered in the last moments, whose charges were
 * still gathering, may be lost, within the lease; the call in flight is not charged; the lease's
 * unused rest comes back to the wallet.
 */
describe('credit lease after SIGKILL', () => {
  const upstream = new MockUpstream()
  beforeAll(() => upstream.start())
  afterAll(() => upstream.stop())

  async function scenario(first: GatewayProcess, restart: () => Promise<GatewayProcess>) {
    const admin = (gateway: GatewayProcess, path: string, payload?: unknown) =>
      fetch(`${gateway.url}admin/v1${path}`, {
        method: payload ? 'POST' : 'GET',
        headers: bearer(ADMIN_TOKEN),
        body: payload ? JSON.stringify(payload) : undefined,
      }).then((response) => response.json() as Promise<any>)
    const account = await admin(first, '/accounts', { name: 'lease crash' })
    await admin(first, `/accounts/${account.id}/credits`, { amount: 10 })
    const { key } = await admin(first, '/keys', { account_id: account.id, env: 'prod' })
    const send = (gateway: GatewayProcess) =>
      fetch(`${gateway.url}v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify(chat(100)),
      })
    upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
    let answered = 0
    const answer = async () => {
      const reply = await send(first)
      expect(reply.status).toBe(200)
      expect(((await reply.json()) as any).usage.cost).toBe(50 / 1e6)
      answered++
    }
    for (let i = 0; i < 20; i++) await answer()
    // The key's own wallet read waits for its calls' charges to land: these 20 are on the books.
    const read = await fetch(`${first.url}v1/wallet`, { headers: bearer(key) })
    expect(read.status).toBe(200)
    const landed = answered
    // Five more are answered; the crash may come while their charges gather.
    for (let i = 0; i < 5; i++) await answer()
    // One more call is in flight when the process dies.
    upstream.always({ kind: 'hang' })
    const inFlight = send(first).catch(() => undefined)
    for (let i = 0; i < 100 && upstream.received.length <= answered; i++) await Bun.sleep(20)
    await first.stop('SIGKILL')
    await inFlight
    upstream.reset()

    const second = await restart()
    try {
      let wallet = (await admin(second, `/accounts/${account.id}`)).wallet
      for (let i = 0; i < 100 && wallet.held !== 0; i++) {
        await Bun.sleep(50)
        wallet = (await admin(second, `/accounts/${account.id}`)).wallet
      }
      // Every call whose charge landed paid, the last ones perhaps not; the call in flight did not; the lease's rest came back.
      const ledger = (await admin(second, `/ledger?account_id=${account.id}&limit=100`)).data as Entry[]
      const charged = ledger.filter((entry) => entry.kind === 'charge').length
      expect(charged).toBeGreaterThanOrEqual(landed)
      expect(charged).toBeLessThanOrEqual(answered)
      expect(wallet).toEqual({ balance: 10 - (charged * 50) / 1e6, held: 0, available: 10 - (charged * 50) / 1e6 })
      // The lease open at the crash was expired; together with the leases given back before it, every lease is accounted for.
      const sum = (kinds: string[]) => ledger.filter((entry) => kinds.includes(entry.kind)).reduce((total, entry) => total + entry.amount, 0)
      expect(ledger.filter((entry) => entry.kind === 'expire').length).toBeGreaterThan(0)
      expect(sum(['charge', 'release', 'expire'])).toBeCloseTo(sum(['hold']), 9)
    } finally {
      await second.stop()
    }
  }

  test('embedded database: the restart gives the lease back', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-lease-crash-'))
    try {
      const env = {
        ...mockCatalogEnv(upstream.baseUrl, upstream.baseUrl),
        TOLLGATE_DATA_DIR: dataDir,
        TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      }
      await scenario(await startGatewayProcess(env), () => startGatewayProcess(env))
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)

  const postgres = testDatabases.find((candidate) => candidate.kind === 'postgres')
  test.skipIf(!postgres)(
    'shared Postgres: another process expires the lease once its owner stops renewing it',
    async () => {
      const database = await (postgres as NonNullable<typeof postgres>).open()
      try {
        const env = {
          ...mockCatalogEnv(upstream.baseUrl, upstream.baseUrl),
          DATABASE_URL: database.url ?? '',
          TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
          TOLLGATE_HOLD_TTL_SECONDS: '1',
          TOLLGATE_WORKERS: '1',
        }
        const survivor = await startGatewayProcess(env)
        await scenario(await startGatewayProcess(env), async () => survivor)
        await expectBooksBalance(database.db)
      } finally {
        await database.close()
      }
    },
    60_000,
  )
})
