import type { Config } from '../config'
import { openDatabase, type DatabaseHandle } from './client'
import { lockDataDir } from './data-dir-lock'
import { migrate } from './migrate'

/** The database the config names, locked (when embedded) and migrated: how every command starts. */
export async function openConfiguredDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<DatabaseHandle> {
  const unlock = config.databaseUrl ? () => {} : lockDataDir(config.dataDir)
  try {
    const handle = await openDatabase(config.databaseUrl ? { url: config.databaseUrl } : { dataDir: config.dataDir })
    await migrate(handle.db)
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
