import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { expectBooksBalance } from '../support/ledger-checks'
import { TcpProxy } from '../support/tcp-proxy'
import { MockUpstream } from '../upstream/mock-upstream'
import { ADMIN_TOKEN, ChildGateway, chat, readRest, writeLifecycleCatalog } from './child-gateway'

/**
 * Outages of Postgres under `serve --workers 2` (docs/operations.md#database-outages), made
 * with a TCP proxy between the gateway's processes and the server: refused and destroyed
 * connections (`cut`), and a partition where nothing passes (`blackhole`). Only Postgres has a
 * network to lose: the embedded database runs inside the process, so these skip without
 * DATABASE_URL.
 */
const postgres = testDatabases.find((candidate) => candidate.kind === 'postgres')
/** A chat call of 10 input and 8 output tokens at 1000 / 2000 credits per million. */
const CALL_COST = 0.026
/** How long after an outage starts a billable call may wait for its 503 (docs/operations.md#database-outages). */
const ANSWER_WITHIN_MS = 5_000
/** How long after the database is back a closing may take to land. */
const SETTLED_WITHIN_MS = 15_000

describe('database outages under two workers', () => {
  const upstream = new MockUpstream()
  let gateway: ChildGateway | undefined
  let database: FreshDatabase | undefined
  let proxy: TcpProxy | undefined

  beforeAll(() => upstream.start())
  afterAll(() => upstream.stop())
  afterEach(async () => {
    gateway?.dispose()
    gateway = undefined
    proxy?.stop()
    proxy = undefined
    upstream.reset()
    await database?.close()
    database = undefined
  })

  async function start(): Promise<{ target: ChildGateway; proxy: TcpProxy; database: FreshDatabase }> {
    if (!postgres) throw new Error('no Postgres')
    database = await postgres.open({ migrated: false })
    const url = new URL(database.url ?? '')
    proxy = new TcpProxy(url.hostname, Number(url.port || 5432)).start()
    gateway = await ChildGateway.start({
      TOLLGATE_CONFIG: writeLifecycleCatalog(upstream.baseUrl),
      DATABASE_URL: proxy.urlFor(url.toString()),
      TOLLGATE_WORKERS: '2',
      TOLLGATE_DRAIN_SECONDS: '0',
      // Every call held exactly, so every billed call needs the database; what calls drawn from a
      // credit lease do during an outage is tested in test/billing/credit-lease*.test.ts.
      TOLLGATE_CREDIT_LEASE: '0',
    })
    return { target: gateway, proxy, database }
  }

  /** A request on a connection of its own: the kernel picks the worker per connection. */
  const post = (target: ChildGateway, key: string, body: string) =>
    target.fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
      body,
      keepalive: false,
    })

  /** Status and time to answer of a call (the body read to its end). */
  async function timed(call: () => Promise<Response>): Promise<{ status: number; retryAfter: string | null; ms: number; code?: string }> {
    const started = performance.now()
    const response = await call()
    const text = await response.text()
    const ms = performance.now() - started
    const code = response.status === 200 ? undefined : (JSON.parse(text).error?.code as string | undefined)
    return { status: response.status, retryAfter: response.headers.get('retry-after'), ms, code }
  }

  const readyz = (target: ChildGateway) => () => target.fetch('/v1/readyz', { headers: { connection: 'close' }, keepalive: false })

  /** The wallet once `held` is back to 0, read by an admin call (which may meet a worker still reconnecting). */
  async function settledWallet(target: ChildGateway, accountId: string, timeoutMs: number): Promise<{ balance: number; held: number }> {
    const deadline = Date.now() + timeoutMs
    let last: { balance: number; held: number } | undefined
    while (Date.now() < deadline) {
      const response = await target.fetch(`/admin/v1/accounts/${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, connection: 'close' } })
      if (response.ok) {
        last = (await response.json()).wallet
        if (last?.held === 0) return last
      } else await response.body?.cancel()
      await Bun.sleep(200)
    }
    throw new Error(`the wallet still holds credit ${timeoutMs} ms after the database came back: ${JSON.stringify(last)}`)
  }

  const expectUnavailableInTime = (answer: { status: number; retryAfter: string | null; ms: number; code?: string }) => {
    expect(answer.status).toBe(503)
    expect(answer.code).toBe('service_unavailable')
    expect(Number(answer.retryAfter)).toBeGreaterThan(0)
    expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS)
  }

  test.skipIf(!postgres)(
    'connections destroyed and refused mid-stream: 503s in time, the stream is billed once the database is back, twice over',
    async () => {
      const { target, proxy, database } = await start()
      const { key, accountId } = await target.fundedKey(1000)
      const words = Array.from({ length: 16 }, (_, index) => `w${index}`).join(' ')
      let billed = 0
      // Each outage leaves the driver in a different state (failed connects, queued statements); two in a row catch more of them.
      for (let outage = 1; outage <= 2; outage++) {
        upstream.always({ text: words, chunkDelayMs: 150, usage: { prompt_tokens: 10, completion_tokens: 8 } })
        const stream = await post(target, key, chat('test/cheap', true))
        expect(stream.status).toBe(200)
        const reader = stream.body?.getReader()
        if (!reader) throw new Error('no body')
        await reader.read()
        proxy.cut()
        const down = performance.now()

        // During the outage: billable calls and readiness answer 503 in time, on whichever worker.
        const calls = []
        for (let round = 0; round < 4; round++) calls.push(await timed(() => post(target, key, chat('test/cheap'))))
        const ready = await timed(readyz(target))
        expect(await readRest(reader)).toContain('[DONE]')
        billed += 1
        for (const call of calls) expectUnavailableInTime(call)
        expect(ready.status).toBe(503)
        expect(ready.ms).toBeLessThan(ANSWER_WITHIN_MS)

        await Bun.sleep(Math.max(1000, 4500 - (performance.now() - down)))
        proxy.restore()
        const up = performance.now()

        // Once the database is back the next billed calls are served at once, on both workers:
        // not after a reconnect backoff the outage made long.
        upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 8 } })
        for (let round = 0; round < 4; round++) {
          const after = await timed(() => post(target, key, chat('test/cheap')))
          expect(after.status).toBe(200)
          expect(after.ms).toBeLessThan(ANSWER_WITHIN_MS)
          billed += 1
        }
        const wallet = await settledWallet(target, accountId, SETTLED_WITHIN_MS)
        expect(performance.now() - up).toBeLessThan(SETTLED_WITHIN_MS)
        expect(wallet.balance).toBeCloseTo(1000 - billed * CALL_COST, 9)
        const ledger = await target.admin('GET', `/ledger?account_id=${accountId}&limit=100`)
        expect((ledger.data as { kind: string }[]).filter((entry) => entry.kind === 'charge')).toHaveLength(billed)
      }
      await expectBooksBalance(database.db)
    },
    150_000,
  )

  test.skipIf(!postgres)(
    'a partition (nothing passes): billable calls and readiness answer in time; whatever was served is billed once it heals',
    async () => {
      const { target, proxy, database } = await start()
      const { key, accountId } = await target.fundedKey(1000)
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 8 } })
      // Both workers have served (and so hold open connections) before the partition.
      for (let round = 0; round < 4; round++) expect((await timed(() => post(target, key, chat('test/cheap')))).status).toBe(200)
      await settledWallet(target, accountId, SETTLED_WITHIN_MS)

      proxy.blackhole()
      const answers = []
      for (let round = 0; round < 3; round++) answers.push(await timed(() => post(target, key, chat('test/cheap'))))
      const ready = await timed(readyz(target))
      for (const answer of answers) {
        expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS)
        if (answer.status !== 200) expectUnavailableInTime(answer)
      }
      expect(ready.status).toBe(503)
      expect(ready.ms).toBeLessThan(ANSWER_WITHIN_MS)

      proxy.restore()
      const up = performance.now()
      const served = answers.filter((answer) => answer.status === 200).length
      const wallet = await settledWallet(target, accountId, SETTLED_WITHIN_MS)
      expect(performance.now() - up).toBeLessThan(SETTLED_WITHIN_MS)
      expect(wallet.balance).toBeCloseTo(1000 - (4 + served) * CALL_COST, 9)

      const after = await timed(() => post(target, key, chat('test/cheap')))
      expect(after.status).toBe(200)
      expect(after.ms).toBeLessThan(ANSWER_WITHIN_MS)
      expect((await settledWallet(target, accountId, SETTLED_WITHIN_MS)).balance).toBeCloseTo(1000 - (5 + served) * CALL_COST, 9)
      await expectBooksBalance(database.db)
    },
    120_000,
  )
})
