import { PGlite } from '@electric-sql/pglite'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { pgliteAssets } from './pglite-assets'
import * as schema from './schema'

/** The one database type the code sees, whichever driver is underneath. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>
/** A transaction, or the database itself: both take the same queries. */
export type Queryable = Parameters<Parameters<Database['transaction']>[0]>[0] | Database

export interface DatabaseHandle {
  db: Database
  kind: 'pglite' | 'postgres'
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** `postgres://…`: that server. Unset: embedded PGlite. */
  url?: string
  /** PGlite's directory; unset: in memory (tests). */
  dataDir?: string
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const client = postgres(options.url, { max: 10, onnotice: () => {} })
    return {
      db: drizzlePostgres(client, { schema }) as unknown as Database,
      kind: 'postgres',
      close: () => client.end({ timeout: 5 }),
    }
  }
  const client = await PGlite.create({ dataDir: options.dataDir, ...(await pgliteAssets()) })
  return {
    db: drizzlePglite(client, { schema }) as unknown as Database,
    kind: 'pglite',
    close: () => client.close(),
  }
}
