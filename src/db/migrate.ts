import { sql } from 'drizzle-orm'
import type { Database, Queryable } from './database'
import { migrations } from './migrations.generated'
import { queryRows } from './rows'

// Any fixed number: every instance takes the same lock, so concurrent starts apply once.
const MIGRATION_LOCK = 7_420_001

/**
 * Applies the embedded migrations of drizzle/ that the database lacks, in one transaction
 * under an advisory lock, so several instances starting together on one Postgres are safe.
 */
export async function migrate(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`)
    await tx.execute(sql`create table if not exists tollgate_migrations (
      tag text primary key,
      applied_at timestamptz not null default now()
    )`)
    const applied = new Set(await appliedTags(tx))
    const pending = migrations.filter((migration) => !applied.has(migration.tag))
    for (const migration of pending) {
      for (const statement of migration.sql.split('--> statement-breakpoint')) {
        if (statement.trim()) await tx.execute(sql.raw(statement))
      }
      await tx.execute(sql`insert into tollgate_migrations (tag) values (${migration.tag})`)
    }
    return pending.map((migration) => migration.tag)
  })
}

/** True when every embedded migration has been applied; false on any database error. */
export async function migrationsApplied(db: Database): Promise<boolean> {
  try {
    const applied = new Set(await appliedTags(db))
    return migrations.every((migration) => applied.has(migration.tag))
  } catch {
    return false
  }
}

async function appliedTags(db: Queryable): Promise<string[]> {
  return (await queryRows<{ tag: string }>(db, sql`select tag from tollgate_migrations`)).map((row) => row.tag)
}
