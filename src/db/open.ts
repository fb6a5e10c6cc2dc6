import type { Config } from '../config'
import { openDatabase, type DatabaseHandle } from './client'
import { lockDataDir } from './data-dir-lock'
import { migrate } from './migrate'

/** The database the config names, locked (when embedded) and migrated: how every command starts. */
export async function openConfiguredDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<DatabaseHandle> {
  const unlock = config.databaseUrl ? () => {} : lockDataDir(config.dataDir)
  try {
    const handle = await openDatabase(config.databaseUrl ? { url: config.databaseUrl } : { dataDir: config.dataDir })
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
