import { ApiKeyStore } from './auth/api-keys'
import { Authenticator } from './auth/authenticate'
import { MemoryHitCounter, RateLimiter, RedisHitCounter } from './auth/rate-limit'
import { UserStore } from './auth/users'
import { UserTokenVerifier, type UserTokenOptions } from './auth/user-tokens'
import { HoldBook } from './billing/hold-book'
import { PayerDirectory } from './billing/payer'
import { HoldSweeper } from './billing/sweeper'
import { Catalog } from './catalog/catalog'
import { CustomModelStore } from './catalog/custom-models'
import type { Config } from './config'
import type { Database, DatabaseHandle } from './db/client'
import { newId } from './util/ids'

export interface ServiceOptions {
  config: Config
  database: Pick<DatabaseHandle, 'db' | 'rows'>
  /** The clock; tests move it. */
  now?: () => number
  userTokens?: UserTokenOptions
}

/** Everything a handler may call, built once per process. Handlers get these, never the framework. */
export interface Services {
  config: Config
  db: Database
  now: () => number
  catalog: Catalog
  keys: ApiKeyStore
  users: UserStore
  customModels: CustomModelStore
  authenticator: Authenticator
  rateLimiter: RateLimiter
  payers: PayerDirectory
  holds: HoldBook
  sweeper: HoldSweeper
  /** Releases connections the services hold (the Redis rate-limit counter). */
  close(): void
}

export function createServices(options: ServiceOptions): Services {
  const now = options.now ?? Date.now
  const db = options.database.db
  const keys = new ApiKeyStore(db, now)
  const users = new UserStore(db)
  // Names this process on its holds, so a sweep can tell live holds from a crashed process's.
  const instanceId = newId('inst')
  const holds = new HoldBook(options.database, { instanceId, ttlMs: options.config.holdTtlMs, now })
  const sweeper = new HoldSweeper(options.database, {
    ttlMs: options.config.holdTtlMs,
    intervalMs: Math.min(15_000, options.config.holdTtlMs / 4),
    now,
    liveHoldIds: () => holds.liveHoldIds(),
  })
  const counter = options.config.redisUrl ? new RedisHitCounter(options.config.redisUrl) : new MemoryHitCounter(now)
  const rateLimiter = new RateLimiter(counter, now)
  return {
    config: options.config,
    db,
    now,
    catalog: new Catalog(options.config),
    keys,
    users,
    customModels: new CustomModelStore(db),
    authenticator: new Authenticator(keys, new UserTokenVerifier(options.config.oidc, options.userTokens), users, rateLimiter),
    rateLimiter,
    payers: new PayerDirectory(db, now),
    holds,
    sweeper,
    close: () => {
      sweeper.stop()
      counter.close()
    },
  }
}
