import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { isTransientDatabaseError } from '../../src/db/errors'
import { PgliteThread } from '../../src/db/pglite-thread'
import { rejectionOf } from '../support/rejection'

/**
 * The embedded database on its own thread (src/db/pglite-thread.ts): statements keep their
 * order and their meaning (a transaction has the database to itself), failures come back with
 * the server's SQLSTATE, and the event loop stays free while a statement runs.
 */
let thread: PgliteThread

// A new embedded database (initdb on its thread) takes seconds on a busy machine.
beforeAll(async () => {
  thread = await PgliteThread.open(undefined)
  await thread.exec('create table items (id int primary key, note text)')
}, 60_000)
afterAll(async () => {
  await thread.close()
})

const ids = async () => (await thread.query<{ id: number }>('select id from items order by id')).rows.map((row) => row.id)

describe('PgliteThread', () => {
  test('a statement sent while a transaction is open waits for it: it is neither inside it nor undone with it', async () => {
    let inside = () => {}
    const opened = new Promise<void>((resolve) => {
      inside = resolve
    })
    let finish = () => {}
    const finished = new Promise<void>((resolve) => {
      finish = resolve
    })
    const transaction = thread.transaction(async (tx) => {
      await tx.query('insert into items (id) values (1)')
      inside()
      await finished
      throw new Error('undo')
    })
    await opened
    const outside = thread.query('insert into items (id) values (2)')
    finish()
    expect(await rejectionOf(transaction)).toBeInstanceOf(Error)
    await outside
    expect(await ids()).toEqual([2])
    await thread.exec('delete from items')
  })

  test('transactions begun together run one after another', async () => {
    const next = () =>
      thread.transaction(async (tx) => {
        const [row] = (await tx.query<{ top: number }>('select coalesce(max(id), 0) as top from items')).rows
        await Bun.sleep(5)
        await tx.query('insert into items (id) values ($1)', [(row?.top ?? 0) + 1])
      })
    await Promise.all([next(), next(), next(), thread.query('insert into items (id) values (100)')])
    expect(await ids()).toEqual([1, 2, 3, 100])
    await thread.exec('delete from items')
  })

  test("a failed statement carries the server's SQLSTATE, and the statements after it run", async () => {
    await thread.query('insert into items (id) values (7)')
    const error = await rejectionOf(thread.query('insert into items (id) values (7)'))
    expect(error).toMatchObject({ code: '23505' })
    expect(isTransientDatabaseError(error)).toBe(false)
    expect((await thread.rows<{ id: number }>({ sql: 'select id from items where id = $1', params: [7] })).map((row) => row.id)).toEqual([7])
    await thread.exec('delete from items')
  })

  test('timestamps come back as text when Drizzle asks (parsers given), as Dates otherwise', async () => {
    const sql = "select '2026-11-28T00:00:00Z'::timestamptz as at"
    const [drizzleRow] = (await thread.query<{ at: unknown }>(sql, [], { parsers: {} })).rows
    const [plainRow] = (await thread.query<{ at: unknown }>(sql)).rows
    expect(typeof drizzleRow?.at).toBe('string')
    expect(plainRow?.at).toBeInstanceOf(Date)
  })

  test('the event loop keeps running while a long statement runs on the thread', async () => {
    let longestGap = 0
    let last = performance.now()
    const ticker = setInterval(() => {
      const now = performance.now()
      longestGap = Math.max(longestGap, now - last)
      last = now
    }, 5)
    const started = performance.now()
    await thread.query('select count(*) from generate_series(1, 3000000)')
    const took = performance.now() - started
    clearInterval(ticker)
    // On the event loop this statement would have held it for all of `took`.
    expect(took).toBeGreaterThan(100)
    expect(longestGap).toBeLessThan(took / 2)
  })

  test('a closed database refuses statements at once', async () => {
    const closed = await PgliteThread.open(undefined)
    await closed.close()
    const error = await rejectionOf(closed.query('select 1'))
    expect(isTransientDatabaseError(error)).toBe(false)
    expect(String(error)).toContain('closed')
  }, 60_000)
})
