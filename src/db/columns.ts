import { bigint, timestamp } from 'drizzle-orm/pg-core'

/**
 * Column shapes the schema files share. Money is integer micro-credits (1 credit = 1,000,000)
 * in bigint columns everywhere.
 */
export const micros = (name: string) => bigint(name, { mode: 'bigint' })

/** When a row was made: set by the database. */
export const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow()
