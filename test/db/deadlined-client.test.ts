import { afterEach, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { type DatabaseHandle, openDatabase } from '../../src/db/client'
import { isTransientDatabaseError } from '../../src/db/errors'
import { testDatabases } from '../support/databases'
import { TcpProxy } from '../support/tcp-proxy'

/**
 * The deadline on every Postgres statement (docs/operations.md#database-outages). Only
 * Postgres has a network to lose; the embedded database runs in the process, so these skip
 * without DATABASE_URL.
 */
const postgres = testDatabases.find((candidate) => candidate.kind === 'postgres')
const DEADLINE_MS = 1_000

describe('statements with a deadline (postgres)', () => {
  let proxy: TcpProxy | undefined
  let handle: DatabaseHandle | undefined

  afterEach(async () => {
    proxy?.stop()
    await handle?.close()
    proxy = undefined
    handle = undefined
  })

  async function open(): Promise<{ handle: DatabaseHandle; proxy: TcpProxy }> {
    const url = new URL(process.env.DATABASE_URL ?? '')
    proxy = new TcpProxy(url.hostname, Number(url.port || 5432)).start()
    handle = await openDatabase({ url: proxy.urlFor(url.toString()), statementDeadlineMs: DEADLINE_MS })
    return { handle, proxy }
  }

  /** How a statement ends: its rows' count or its error's code, and when. */
  async function outcome(run: () => Promise<unknown>): Promise<{ code: string | undefined; transient: boolean; ms: number }> {
    const started = performance.now()
    try {
      await run()
      return { code: undefined, transient: false, ms: performance.now() - started }
    } catch (error) {
      const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code
      return { code, transient: isTransientDatabaseError(error), ms: performance.now() - started }
    }
  }

  test.skipIf(!postgres)('a partition fails statements and transactions at the deadline; once it heals the next ones are served at once', async () => {
    const { handle, proxy } = await open()
    await handle.rows(sql`select 1`)
    await handle.db.execute(sql`select 1`)
    proxy.blackhole()
    const [billing, pooled, transaction] = await Promise.all([
      outcome(() => handle.rows(sql`select 1`)),
      outcome(() => handle.db.execute(sql`select 1`)),
      outcome(() => handle.db.transaction(async (tx) => tx.execute(sql`select 1`))),
    ])
    for (const failed of [billing, pooled, transaction]) {
      expect(failed.transient).toBe(true)
      expect(failed.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50)
      // Generous: the deadline and a busy machine's scheduling.
      expect(failed.ms).toBeLessThan(DEADLINE_MS + 2_000)
    }
    // New connections get no further than the partition either.
    expect((await outcome(() => handle.rows(sql`select 1`))).transient).toBe(true)
    proxy.restore()
    for (const served of [await outcome(() => handle.rows(sql`select 1`)), await outcome(() => handle.db.execute(sql`select 1`))]) {
      expect(served.code).toBeUndefined()
      expect(served.ms).toBeLessThan(DEADLINE_MS)
    }
  })

  test.skipIf(!postgres)('an admin report may run past the request path deadline, on connections of its own', async () => {
    const { handle } = await open()
    const slow = sql`select pg_sleep(${(DEADLINE_MS + 500) / 1000})`
    const [report, request] = await Promise.all([outcome(() => handle.reports.execute(slow)), outcome(() => handle.db.execute(slow))])
    expect(report.code).toBeUndefined()
    expect(report.ms).toBeGreaterThanOrEqual(DEADLINE_MS)
    expect(request.transient).toBe(true)
    // The request pool's failure did not touch the reports' connections, nor theirs the request pool.
    expect((await outcome(() => handle.db.execute(sql`select 1`))).code).toBeUndefined()
  })

  test.skipIf(!postgres)('refused connects fail every waiting statement at once, and the first statement after is served at once', async () => {
    const { handle, proxy } = await open()
    await handle.rows(sql`select 1`)
    proxy.cut()
    const waiting = await Promise.all(Array.from({ length: 12 }, () => outcome(() => handle.rows(sql`select 1`))))
    for (const failed of waiting) {
      expect(failed.transient).toBe(true)
      expect(failed.ms).toBeLessThan(DEADLINE_MS)
    }
    await Bun.sleep(2_000)
    proxy.restore()
    const served = await outcome(() => handle.rows(sql`select 1`))
    expect(served.code).toBeUndefined()
    expect(served.ms).toBeLessThan(DEADLINE_MS)
  })

  test.skipIf(!postgres)('a slow statement on a live server is cancelled by the server alone; the others on the pool go on', async () => {
    const { handle } = await open()
    const [slow, quick] = await Promise.all([
      outcome(() => handle.db.execute(sql`select pg_sleep(3)`)),
      outcome(async () => {
        // Runs across the moment the server cancels the slow one (half a second before the deadline).
        await Bun.sleep(300)
        await handle.db.execute(sql`select pg_sleep(0.4)`)
      }),
    ])
    expect(slow.code).toBe('57014')
    expect(slow.transient).toBe(true)
    expect(quick.code).toBeUndefined()
  })
})
