import postgres from 'postgres'
import { logEvent } from '../observability/log'
import { describeDatabase } from './describe-database'
import { describeDatabaseError, isTransientDatabaseError } from './errors'

/**
 * A start whose Postgres server is not there yet (a container started beside it, a failover in
 * progress) waits for it (docs/operations.md#postgres): it tries to connect, backing off from a
 * quarter of a second to five seconds between tries, for up to `waitMs` (TOLLGATE_DB_WAIT_SECONDS).
 * Every failed try is a JSON line naming the server (host and port, never the user or the
 * password) and what to check; one line says when it answers. A refusal that waiting cannot
 * mend (a wrong password, a database that does not exist) fails at once.
 */

export interface DatabaseWait {
  /** How long to keep trying; 0: one try. */
  waitMs: number
  /** One connection attempt; the default opens a connection, runs `select 1` and closes it. */
  probe?: (url: string, timeoutMs: number) => Promise<void>
  now?: () => number
  sleep?: (ms: number) => Promise<void>
}

/** The database could not be reached (or refused the gateway): the message and fields of the start's last line. */
export class DatabaseUnreachableError extends Error {
  constructor(
    message: string,
    readonly fields: Record<string, unknown>,
  ) {
    super(message)
  }
}

const FIRST_BACKOFF_MS = 250
const MAX_BACKOFF_MS = 5_000
/** One try waits at most this long for the server's answer: a partitioned host never refuses. */
const MAX_TRY_MS = 5_000

export async function waitForDatabase(url: string, options: DatabaseWait): Promise<void> {
  const { waitMs, probe = connectOnce, now = Date.now, sleep = Bun.sleep } = options
  const server = serverOf(url)
  const started = now()
  let backoffMs = FIRST_BACKOFF_MS
  for (let attempt = 1; ; attempt++) {
    try {
      await probe(url, Math.max(1_000, Math.min(MAX_TRY_MS, waitMs - (now() - started))))
      logEvent('info', attempt === 1 ? 'database connected' : `database connected after ${attempt} tries`, {
        database: server,
        attempts: attempt,
        waited_seconds: seconds(now() - started),
      })
      return
    } catch (error) {
      const cause = describeDatabaseError(error)
      const fields = { database: server, attempts: attempt, waited_seconds: seconds(now() - started), error: cause, hint: hintFor(error, server) }
      if (!isTransientDatabaseError(error) && !unresolvedHost(error)) {
        throw new DatabaseUnreachableError(`database refused the connection: ${cause.message}`, fields)
      }
      const waitedMs = now() - started
      if (waitedMs >= waitMs) {
        throw new DatabaseUnreachableError(
          `database unreachable: gave up after ${seconds(waitedMs)} s and ${attempt} ${attempt === 1 ? 'try' : 'tries'} (TOLLGATE_DB_WAIT_SECONDS=${waitMs / 1000})`,
          fields,
        )
      }
      // The last try falls on the deadline itself.
      const pauseMs = Math.min(backoffMs, waitMs - waitedMs)
      logEvent('warn', `database unreachable: trying again in ${seconds(pauseMs)} s`, { ...fields, retry_in_seconds: seconds(pauseMs) })
      await sleep(pauseMs)
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS)
    }
  }
}

/** A name the resolver does not know yet is what a container's DNS answers before the service starts. */
function unresolvedHost(error: unknown): boolean {
  const code = describeDatabaseError(error).code
  return code === 'ENOTFOUND' || code === 'EAI_AGAIN'
}

/** What to check, by the kind of failure; the server as host and port only. */
function hintFor(error: unknown, server: Record<string, string | number>): string {
  const where = server.host === undefined ? 'the server DATABASE_URL names' : `${server.host}:${server.port}`
  const code = describeDatabaseError(error).code
  if (code === '28P01' || code === '28000') return `check the user and password in DATABASE_URL (the server ${where} refused them)`
  if (code === '3D000')
    return `check the database name in DATABASE_URL: ${where} has no database ${server.name === undefined ? 'of that name' : `"${server.name}"`}`
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `check the host in DATABASE_URL: ${server.host ?? 'it'} does not resolve (yet)`
  return `check that Postgres is running and reachable at ${where} (DATABASE_URL), or unset DATABASE_URL to use the embedded database`
}

function serverOf(url: string): Record<string, string | number> {
  return describeDatabase({ databaseUrl: url, dataDir: '' })
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10
}

async function connectOnce(url: string, timeoutMs: number): Promise<void> {
  const client = postgres(url, { max: 1, connect_timeout: Math.ceil(timeoutMs / 1000), onnotice: () => {} })
  try {
    await client`select 1`
  } finally {
    await client.end({ timeout: 1 }).catch(() => {})
  }
}
