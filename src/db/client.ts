import type { PGlite } from '@electric-sql/pglite'
import { is, type Query, SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import postgres, { type Sql } from 'postgres'
import type { Database } from './database'
import { DeadlinedPostgres } from './deadlined-client'
import { PgliteThread } from './pglite-thread'
import { queryRows } from './rows'
import * as schema from './schema'

export interface DatabaseHandle {
  db: Database
  kind: 'pglite' | 'postgres'
  /**
   * Runs a raw statement as a prepared statement: the hot billing statements are parsed and
   * planned once per connection instead of every time (postgres: the driver's; the embedded
   * database: db/pglite-prepared.ts on its thread, for a rendered query, a FixedStatement's).
   */
  rows<Row>(query: SQL | Query): Promise<Row[]>
  /**
   * For admin reports and exports (ledger pages, usage summaries), which may scan far more
   * than a request's statements: on Postgres a small pool of their own whose statements may
   * run up to REPORT_DEADLINE_MS, so a large report is neither cancelled at the request path's
   * deadline nor holding the connections requests need. The embedded database: `db` itself.
   */
  reports: Database
  close(): Promise<void>
}

const dialect = new PgDialect()

export interface DatabaseOptions {
  /** `postgres://…`: that server. Unset: embedded PGlite. */
  url?: string
  /** PGlite's directory; unset: in memory (tests). */
  dataDir?: string
  /**
   * Postgres: how long a statement may go unanswered before it fails as an outage
   * (deadlined-client.ts; default STATEMENT_DEADLINE_MS). `null`: no deadline, for migrations,
   * whose statements may take long on a large database.
   */
  statementDeadlineMs?: number | null
}

/**
 * A billable call meets at most one unanswered statement before it fails (the client is then
 * replaced and the next statement fails fast or lands), so it is answered 503 within this
 * and a little more (docs/operations.md#database-outages).
 */
export const STATEMENT_DEADLINE_MS = 3_000

/** How long one statement of an admin report may run (`reports`). */
export const REPORT_DEADLINE_MS = 60_000

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const deadlineMs = options.statementDeadlineMs === undefined ? STATEMENT_DEADLINE_MS : options.statementDeadlineMs
    if (deadlineMs === null) {
      const client = postgres(options.url, { max: 1, onnotice: () => {} })
      const db = drizzlePostgres(client, { schema }) as unknown as Database
      return {
        db,
        kind: 'postgres',
        rows: async <Row>(query: SQL | Query) =>
          is(query, SQL) ? queryRows<Row>(db, query) : ((await client.unsafe(query.sql, query.params as never[])) as unknown as Row[]),
        reports: db,
        close: () => client.end({ timeout: 5 }),
      }
    }
    const client = new DeadlinedPostgres(options.url, 10, deadlineMs)
    // One connection for the billing statements: they queue (pipelined) on one server process
    // instead of waiting on each other's row locks from several.
    const lane = new DeadlinedPostgres(options.url, 1, deadlineMs)
    const reports = new DeadlinedPostgres(options.url, 2, Math.max(deadlineMs, REPORT_DEADLINE_MS))
    return {
      db: drizzlePostgres(client as unknown as Sql, { schema }) as unknown as Database,
      reports: drizzlePostgres(reports as unknown as Sql, { schema }) as unknown as Database,
      kind: 'postgres',
      rows: async <Row>(query: SQL | Query) => {
        const { sql, params } = is(query, SQL) ? dialect.sqlToQuery(query) : query
        return (await lane.unsafe(sql, params as never[], { prepare: true })) as unknown as Row[]
      },
      close: async () => {
        await Promise.all([client.end(5), lane.end(5), reports.end(5)])
      },
    }
  }
  const client = await PgliteThread.open(options.dataDir)
  const db = drizzlePglite(client as unknown as PGlite, { schema }) as unknown as Database
  return {
    db,
    kind: 'pglite',
    rows: async <Row>(query: SQL | Query) => (is(query, SQL) ? queryRows<Row>(db, query) : client.rows<Row>(query)),
    reports: db,
    close: () => client.close(),
  }
}
