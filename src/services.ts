import { ApiKeyStore } from './auth/api-keys'
import { Authenticator } from './auth/authenticate'
import { MemoryHitCounter, RateLimiter, RedisHitCounter } from './auth/rate-limit'
import { UserStore } from './auth/users'
import { UserTokenVerifier, type UserTokenOptions } from './auth/user-tokens'
import { Catalog } from './catalog/catalog'
import { CustomModelStore } from './catalog/custom-models'
import type { Config } from './config'
import type { Database } from './db/client'

export interface ServiceOptions {
  config: Config
  db: Database
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
  /** Releases connections the services hold (the Redis rate-limit counter). */
  close(): void
}

export function createServices(options: ServiceOptions): Services {
  const now = options.now ?? Date.now
  const keys = new ApiKeyStore(options.db, now)
  const users = new UserStore(options.db)
  const counter = options.config.redisUrl ? new RedisHitCounter(options.config.redisUrl) : new MemoryHitCounter(now)
  return {
    config: options.config,
    db: options.db,
    now,
    catalog: new Catalog(options.config),
    keys,
    users,
    customModels: new CustomModelStore(options.db),
    authenticator: new Authenticator(keys, new UserTokenVerifier(options.config.oidc, options.userTokens), users, new RateLimiter(counter, now)),
    close: () => counter.close(),
  }
}
