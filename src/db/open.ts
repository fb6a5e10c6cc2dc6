import { type DatabaseHandle, openDatabase } from './client'
import { lockDataDir } from './data-dir-lock'
import { embeddedTemplate } from './embedded-template'
import { migrate } from './migrate'
import { holdsDatabase, seedDataDir } from './seed-data-dir'
import { waitForDatabase } from './wait-for-database'

/**
 * The database the config names, locked (when embedded) and migrated: how every command starts.
 * A Postgres server that does not answer yet is waited for up to `databaseWaitMs`
 * (wait-for-database.ts; undefined: one try).
 */
export async function openConfiguredDatabase(config: { databaseUrl: string | undefined; dataDir: string; databaseWaitMs?: number }): Promise<DatabaseHandle> {
  if (config.databaseUrl) await waitForDatabase(config.databaseUrl, { waitMs: config.databaseWaitMs ?? 0 })
  const unlock = config.databaseUrl ? () => {} : lockDataDir(config.dataDir)
  try {
    const handle = config.databaseUrl ? await openDatabase({ url: config.databaseUrl }) : await openEmbedded(config.dataDir)
    if (config.databaseUrl) {
      // Migrations may take longer than a statement's deadline: a connection of their own, without one.
      const migrating = await openDatabase({ url: config.databaseUrl, statementDeadlineMs: null })
      try {
        await migrate(migrating.db)
      } finally {
        await migrating.close()
      }
    } else await migrate(handle.db)
    return {
      ...handle,
      close: async () => {
        await handle.close()
        unlock()
      },
    }
  } catch (error) {
    unlock()
    throw error
  }
}

/**
 * The embedded database in `dataDir` (locked by the caller). A directory without one gets the
 * migrated template first (embedded-template.ts), so this process never runs initdb itself.
 */
async function openEmbedded(dataDir: string): Promise<DatabaseHandle> {
  if (!holdsDatabase(dataDir)) await seedDataDir(dataDir, await embeddedTemplate())
  try {
    return await openDatabase({ dataDir })
  } catch (error) {
    throw new Error(
      `The embedded database in ${dataDir} could not be opened (${error instanceof Error ? error.message : String(error)}). ` +
        'If its first start was interrupted before this version of Tollgate, it holds no data yet: delete the directory and start again. Otherwise restore it from a backup.',
    )
  }
}
