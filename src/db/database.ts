import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import type * as schema from './schema'

/** The one database type the code sees, whichever driver is underneath (client.ts opens it). */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>
/** A transaction, or the database itself: both take the same queries. */
export type Queryable = Parameters<Parameters<Database['transaction']>[0]>[0] | Database
