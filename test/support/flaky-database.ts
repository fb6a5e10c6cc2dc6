import type { SQL } from 'drizzle-orm'
import type { DatabaseHandle } from '../../src/db/client'

/**
 * A database handle whose billing statements (`rows`) fail while `down` is set, with the
 * error a driver gives for a refused connection. For the embedded database, which has no
 * network to cut; against Postgres the tests cut a real TCP proxy instead (tcp-proxy.ts).
 */
export interface FlakyDatabase<Handle extends Pick<DatabaseHandle, 'db' | 'rows'>> {
  handle: Handle
  down: boolean
}

export function flaky<Handle extends Pick<DatabaseHandle, 'db' | 'rows'>>(handle: Handle): FlakyDatabase<Handle> {
  const state: FlakyDatabase<Handle> = {
    down: false,
    handle: {
      ...handle,
      rows: <Row>(query: SQL): Promise<Row[]> => {
        if (state.down) return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
        return handle.rows<Row>(query)
      },
    },
  }
  return state
}
