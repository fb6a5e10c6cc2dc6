import { expect, test } from 'bun:test'
import { describeDatabaseError } from '../../src/db/errors'

/** Drizzle wraps the driver's error in one whose message carries the statement and its parameters. */
function failedQuery(serverMessage: string, code: string): Error {
  const server = Object.assign(new Error(serverMessage), { code })
  return new Error(`Failed query: select * from api_keys where secret_hash = $1\nparams: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08`, {
    cause: server,
  })
}

test('describes a failed query by the server, never by its statement or parameters', () => {
  const described = describeDatabaseError(failedQuery('column "hint" does not exist', '42703'))
  expect(described).toEqual({ code: '42703', message: 'column "hint" does not exist' })
  expect(describeDatabaseError(new Error('Failed query: insert into t values ($1)\nparams: x'))).toEqual({ code: undefined, message: 'query failed' })
})

test("a value the server quotes back is left out; the schema's names stay", () => {
  expect(describeDatabaseError(failedQuery('invalid input syntax for type integer: "tollgate-secret"', '22P02')).message).toBe(
    'invalid input syntax for type integer: "…"',
  )
  expect(describeDatabaseError(failedQuery('value "123456789012" is out of range for type integer', '22003')).message).toBe(
    'value "…" is out of range for type integer',
  )
  expect(describeDatabaseError(failedQuery('duplicate key value violates unique constraint "api_keys_pkey"', '23505')).message).toBe(
    'duplicate key value violates unique constraint "api_keys_pkey"',
  )
  expect(describeDatabaseError(failedQuery('invalid byte sequence for encoding "UTF8": 0x00', '22021')).message).toBe(
    'invalid byte sequence for encoding "UTF8": 0x00',
  )
})
