import { scrubCredentials } from '../util/scrub-credentials'

/**
 * What a database failure means for the caller, read from the error and its causes: drivers
 * and Drizzle wrap the server's error (and Drizzle's message carries the statement and its
 * parameters, which must never reach a log line).
 */

/**
 * SQLSTATE classes and codes, and driver codes, that say the server cannot serve now (it is
 * unreachable, starting up or shutting down, out of resources, read-only, or gave up on a lock
 * or a timeout), not that the statement was wrong: 08 connection exceptions, 53 insufficient
 * resources, 57P01-57P05 shutdowns and crash recovery.
 */
const TRANSIENT_SQLSTATE_PREFIXES = ['08', '53', '57P']
const TRANSIENT_SQLSTATES = new Set([
  // serialization failure, deadlock detected
  '40001',
  '40P01',
  // object not in prerequisite state ("the database system is starting up", "not accepting connections"), lock not available
  '55000',
  '55P03',
  // query canceled: the server's statement_timeout (docs/operations.md#database-outages)
  '57014',
  // read-only SQL transaction: a standby, or a primary being failed over
  '25006',
])
const TRANSIENT_DRIVER_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  // A statement the database did not answer in time (deadlined-client.ts).
  'STATEMENT_DEADLINE',
])

function codesOf(error: unknown): string[] {
  const codes: string[] = []
  for (let current: unknown = error, depth = 0; current && depth < 8; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') codes.push(code)
  }
  return codes
}

/**
 * True when trying the same statement again later may succeed: the connection failed, the
 * server is shutting down or overloaded, or a lock conflict rolled the statement back. False
 * for errors the statement itself caused (bad data, a violated constraint): retrying those
 * fails the same way.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  return codesOf(error).some(
    (code) => TRANSIENT_DRIVER_CODES.has(code) || TRANSIENT_SQLSTATES.has(code) || TRANSIENT_SQLSTATE_PREFIXES.some((prefix) => code.startsWith(prefix)),
  )
}

const MAX_DESCRIPTION_LENGTH = 200

/**
 * A double-quoted value in the server's message (`invalid input syntax for type integer: "…"`,
 * `value "…" is out of range`) is a statement parameter; a quoted name after one of these words
 * is the schema's own (a constraint, a column) and helps whoever reads the log.
 */
const QUOTED_VALUE =
  /(?<!\b(?:constraint|relation|column|table|index|type|enum|encoding|schema|function|database|role|sequence|trigger|view|operator|extension) )"[^"]*"/gi

/**
 * A short, parameter-free description for a log line: the innermost error's code and the
 * first line of its message (the server's own words, never the statement or its values).
 * Any error chain may be described so, not only a database's.
 */
export function describeDatabaseError(error: unknown): { code: string | undefined; message: string } {
  let innermost: unknown = error
  for (let depth = 0; depth < 8; depth++) {
    const cause = (innermost as { cause?: unknown } | null)?.cause
    if (!cause) break
    innermost = cause
  }
  const code = codesOf(error).at(-1)
  const text = innermost instanceof Error ? innermost.message : String(innermost)
  const firstLine = text.split('\n', 1)[0] ?? ''
  // Drizzle's own wrapper starts "Failed query:" and goes on with the SQL and its parameters.
  const message = firstLine.startsWith('Failed query') ? 'query failed' : scrubCredentials(firstLine.replace(QUOTED_VALUE, '"…"'))
  return { code, message: message.length > MAX_DESCRIPTION_LENGTH ? `${message.slice(0, MAX_DESCRIPTION_LENGTH)}…` : message }
}
