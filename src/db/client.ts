import { PGlite } from '@electric-sql/pglite'
import type { SQL } from 'drizzle-orm'
import { PgDialect, type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { pgliteAssets } from './pglite-assets'
import { queryRows } from './rows'
import * as schema from './schema'

/** The one database type the code sees, whichever driver is underneath. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>
/** A transaction, or the database itself: both take the same queries. */
export type Queryable = Parameters<Parameters<Database['transaction']>[0]>[0] | Database

export interface DatabaseHandle {
  db: Database
  kind: 'pglite' | 'postgres'
  /**
   * Runs a raw statement as a prepared statement where the driver supports it (postgres): the
   * hot billing statements are parsed and planned once per connection instead of every time.
   */
  rows<Row>(query: SQL): Promise<Row[]>
  close(): Promise<void>
}

const dialect = new PgDialect()

export interface DatabaseOptions {
  /** `postgres://…`: that server. Unset: embedded PGlite. */
  url?: string
  /** PGlite's directory; unset: in memory (tests). */
  dataDir?: string
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const client = postgres(options.url, { max: 10, onnotice: () => {} })
    // One connection for the billing statements: they queue (pipelined) on one server process
    // instead of waiting on each other's row locks from several.
    const lane = postgres(options.url, { max: 1, onnotice: () => {} })
    return {
      db: drizzlePostgres(client, { schema }) as unknown as Database,
      kind: 'postgres',
      rows: async <Row>(query: SQL) => {
        const { sql, params } = dialect.sqlToQuery(query)
        return (await lane.unsafe(sql, params as never[], { prepare: true })) as unknown as Row[]
      },
      close: async () => {
        await Promise.all([client.end({ timeout: 5 }), lane.end({ timeout: 5 })])
      },
    }
  }
  const client = await PGlite.create({ dataDir: options.dataDir, ...(await pgliteAssets()) })
  const db = drizzlePglite(client, { schema }) as unknown as Database
  return {
    db,
    kind: 'pglite',
    rows: <Row>(query: SQL) => queryRows<Row>(db, query),
    close: () => client.close(),
  }
}
