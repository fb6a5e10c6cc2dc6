import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PGlite } from '@electric-sql/pglite'
import { literalOf, PglitePrepared } from '../../src/db/pglite-prepared'

/**
 * The embedded database's prepared statements: a rendered text is prepared once and run with
 * its values written as literals, which must come back exactly as bound parameters would (a
 * quote, a backslash, a dollar sign, non-ASCII, JSON); what cannot be written that way, or
 * prepared, runs unprepared with the same result.
 */
let client: PGlite
let prepared: PglitePrepared

// A new embedded database (initdb) takes seconds on a busy machine.
beforeAll(async () => {
  client = await PGlite.create()
  prepared = new PglitePrepared(client)
}, 60_000)
afterAll(async () => {
  await client.close()
})

const preparedNames = async () => (await client.query<{ name: string }>('select name from pg_prepared_statements order by name')).rows.map((row) => row.name)

describe('PglitePrepared', () => {
  test("a text is prepared once and run with each call's values", async () => {
    const query = (value: string, count: number) => ({ sql: 'select $1::text as value, $2::int * 2 as doubled', params: [value, count] })
    expect(await prepared.rows(query('a', 1))).toEqual([{ value: 'a', doubled: 2 }])
    expect(await prepared.rows(query('b', 21))).toEqual([{ value: 'b', doubled: 42 }])
    expect(await preparedNames()).toEqual(['tollgate_statement_1'])
  })

  test('hostile strings come back exactly as they went in', async () => {
    const values = ["it's", "''; drop table x; --", 'back\\slash\\', '$$ dollar $tag$', 'line\nbreak', 'ünïcödé 漢字 🎉', '{"json":"with \\"quotes\\""}', '']
    for (const value of values) expect(await prepared.rows({ sql: 'select $1::text as value', params: [value] })).toEqual([{ value }])
    const json = JSON.stringify([{ id: "o'brien", note: 'a\\b' }])
    expect(await prepared.rows({ sql: "select ($1::jsonb)->0->>'id' as id, ($1::jsonb)->0->>'note' as note", params: [json] })).toEqual([
      { id: "o'brien", note: 'a\\b' },
    ])
  })

  test('numbers, booleans, null and bigints are written as literals of their own', async () => {
    expect(
      await prepared.rows({
        sql: 'select $1::numeric as n, $2::boolean as b, $3::text as t, $4::bigint::text as big',
        params: [-1.5, true, null, 9007199254740993n],
      }),
    ).toEqual([{ n: '-1.5', b: true, t: null, big: '9007199254740993' }])
  })

  test('values that cannot be written as literals run unprepared, with the same answer', async () => {
    expect(literalOf(new Date(0))).toBeUndefined()
    expect(literalOf('nul\0byte')).toBeUndefined()
    expect(literalOf(Number.NaN)).toBeUndefined()
    const before = await preparedNames()
    expect(await prepared.rows({ sql: 'select $1::timestamptz as at', params: [new Date(0).toISOString()] })).toHaveLength(1)
    expect(await prepared.rows({ sql: 'select $1::text as unprepared', params: [{ toString: () => 'x' }] })).toEqual([{ unprepared: 'x' }])
    expect((await preparedNames()).length).toBe(before.length + 1)
  })

  test('a text the server cannot prepare still runs', async () => {
    // PREPARE takes only a query (select, insert, update, delete, values), and one statement.
    const before = await preparedNames()
    expect(await prepared.rows({ sql: 'show standard_conforming_strings', params: [] })).toEqual([{ standard_conforming_strings: 'on' }])
    expect(await prepared.rows({ sql: 'show standard_conforming_strings', params: [] })).toHaveLength(1)
    await expect(prepared.rows({ sql: 'select 1; select 2', params: [] })).rejects.toThrow()
    expect(await preparedNames()).toEqual(before)
  })
})
