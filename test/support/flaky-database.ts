import type { Query, SQL } from 'drizzle-orm'
import type { DatabaseHandle } from '../../src/db/client'

/**
 * A database handle whose statements fail while `down` is set, with the error a driver gives
 * for a refused connection. For the embedded database, which has no network to cut; against
 * Postgres the tests cut a real TCP proxy instead (tcp-proxy.ts).
 *
 * By default only the billing statements (`rows`) fail; `{ every: true }` fails the Drizzle
 * queries too (key lookups, wallets, readiness), as a whole outage does.
 */
export interface FlakyDatabase<Handle extends Pick<DatabaseHandle, 'db' | 'rows'>> {
  handle: Handle
  down: boolean
}

export function flaky<Handle extends Pick<DatabaseHandle, 'db' | 'rows'>>(handle: Handle, options: { every?: boolean } = {}): FlakyDatabase<Handle> {
  const state: FlakyDatabase<Handle> = {
    down: false,
    handle: {
      ...handle,
      rows: <Row>(query: SQL | Query): Promise<Row[]> => {
        if (state.down) return Promise.reject(refused())
        return handle.rows<Row>(query)
      },
    },
  }
  if (options.every) {
    state.handle.db = new Proxy(handle.db, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver)
        return state.down && (typeof value === 'function' || property === 'query') ? failingChain(refused()) : value
      },
    })
  }
  return state
}

function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
}

/** Stands for any query builder: every step of a chain (`select().from().where()`) gives itself back, and awaiting it fails. */
function failingChain(error: Error): unknown {
  const rejected = Promise.reject(error)
  rejected.catch(() => undefined)
  const chain: unknown = new Proxy(() => undefined, {
    get: (_target, property) => (property === 'then' || property === 'catch' || property === 'finally' ? rejected[property].bind(rejected) : chain),
    apply: () => chain,
  })
  return chain
}
