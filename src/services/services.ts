import { WebhookSender, type WebhookSenderOptions } from '../alerts/webhook-sender'
import { ApiKeyStore } from '../auth/api-keys'
import { Authenticator } from '../auth/authenticate'
import { PayerDirectory } from '../auth/payer-directory'
import { MemoryHitCounter, RateLimiter, RedisHitCounter } from '../auth/rate-limit'
import { UserQuotas } from '../auth/user-quotas'
import { type UserTokenOptions, UserTokenVerifier } from '../auth/user-tokens'
import { UserStore } from '../auth/users'
import { CreditLeases } from '../billing/credit-lease'
import { HoldBook, type HoldBookOptions } from '../billing/hold-book'
import { HoldSweeper } from '../billing/sweeper'
import { Catalog } from '../catalog/catalog'
import { CustomModelStore } from '../catalog/custom-models'
import { RouteCooldowns } from '../catalog/route-cooldowns'
import type { Config } from '../config/config'
import { configSecrets } from '../config/secrets'
import type { DatabaseHandle } from '../db/client'
import type { Database } from '../db/database'
import { IdempotentCalls } from '../idempotency/idempotent-calls'
import { Readiness } from '../lifecycle/readiness'
import { ActivityWriter, type ActivityWriterOptions } from '../observability/activity-writer'
import { newId } from '../util/ids'
import { knownSecrets } from '../util/known-secrets'

export interface ServiceOptions {
  config: Config
  database: Pick<DatabaseHandle, 'db' | 'rows' | 'reports' | 'kind'>
  /** The clock; tests move it. */
  now?: () => number
  userTokens?: UserTokenOptions
  /** How long a closing's answer is waited for and how its retries back off (the hold book's defaults otherwise); tests of outages shorten them. */
  closings?: Pick<HoldBookOptions, 'closingAnswerMs' | 'retryDelayMs'>
  /** How webhook deliveries are retried, timed and polled (the sender's defaults and the config's poll otherwise); tests shorten them. */
  webhooks?: Omit<WebhookSenderOptions, 'now'>
  /** How request activity is batched and retried (the writer's defaults otherwise); tests shorten them. */
  activity?: Omit<ActivityWriterOptions, 'now' | 'retentionDays'>
}

/** Everything a handler may call, built once per process. Handlers get these, never the framework. */
export interface Services {
  /** The configuration as last loaded: `reloadCatalog` replaces its catalogue part. */
  readonly config: Config
  db: Database
  /** Admin reports and exports: connections of their own with a longer statement deadline (db/client.ts). */
  reportsDb: Database
  now: () => number
  /**
   * The catalogue new requests see. Read it when a request starts using it, never keep it
   * across requests: a reload replaces it, and a request keeps the entries it already read.
   */
  readonly catalog: Catalog
  /** Takes a reloaded config's providers, models and aliases for new requests (docs/operations.md#reload). */
  reloadCatalog(next: Pick<Config, 'providers' | 'models' | 'aliases' | 'configFile'>): void
  /** False from the first shutdown signal on: `/v1/readyz` answers 503. */
  readiness: Readiness
  keys: ApiKeyStore
  users: UserStore
  /** Users' spend limits by period, their own and the default (docs/billing.md#spend-limits-by-period). */
  userQuotas: UserQuotas
  customModels: CustomModelStore
  authenticator: Authenticator
  rateLimiter: RateLimiter
  payers: PayerDirectory
  holds: HoldBook
  sweeper: HoldSweeper
  /** Which routes are skipped for now after failing in a row (this process's own view). */
  routeCooldowns: RouteCooldowns
  /** Looks for alerts and sends webhook deliveries in the background, once started (`serve` starts it). */
  webhooks: WebhookSender
  /** The calls made with an Idempotency-Key, claimed, kept and replayed across instances (docs/api.md#idempotent-retries). */
  idempotentCalls: IdempotentCalls
  /** Writes every recorded request's activity in batches, off the requests' path; shutdown flushes it (docs/operations.md#request-activity). */
  activity: ActivityWriter
  /** Releases connections the services hold (the Redis rate-limit counter). */
  close(): void
}

/**
 * How long charges drawn from credit leases gather before one statement writes them
 * (HoldBook.leaseChargeGatherMs): their calls were answered already, so this costs no latency,
 * only that much more of what a crash can lose, within the lease (docs/billing.md#credit-lease).
 * Measured at 1,000 calls a second on Postgres: 2 ms made a statement per call or two, the
 * database's CPU then competed with the gateway's and the p99 was 8-11 ms; 25 ms, 6-7 ms. The
 * embedded database runs one statement at a time in this process, at some 3 ms each.
 */
const CHARGE_GATHER_MS = 25

export function createServices(options: ServiceOptions): Services {
  const now = options.now ?? Date.now
  const db = options.database.db
  const keys = new ApiKeyStore(db, now)
  const users = new UserStore(db)
  const userQuotas = new UserQuotas(db, now)
  // Names this process on its holds, so a sweep can tell live holds from a crashed process's.
  const instanceId = newId('inst')
  const leaseMicros = options.config.creditLeaseMicros
  const leases = leaseMicros ? new CreditLeases(options.database, { instanceId, ttlMs: options.config.holdTtlMs, now, maxLease: leaseMicros }) : undefined
  const holds = new HoldBook(options.database, {
    instanceId,
    ttlMs: options.config.holdTtlMs,
    now,
    leases,
    leaseChargeGatherMs: CHARGE_GATHER_MS,
    ...options.closings,
  })
  const sweeper = new HoldSweeper(options.database, {
    ttlMs: options.config.holdTtlMs,
    intervalMs: Math.min(15_000, options.config.holdTtlMs / 4),
    now,
    liveHoldIds: () => holds.liveHoldIds(),
    renewed: (asked, renewed, expiresAt) => leases?.confirmRenewal(asked, renewed, expiresAt),
  })
  const idempotentCalls = new IdempotentCalls(options.database, { instanceId, leaseMs: options.config.holdTtlMs, now })
  const counter = options.config.redisUrl ? new RedisHitCounter(options.config.redisUrl) : new MemoryHitCounter(now)
  const rateLimiter = new RateLimiter(counter, now, options.config.freeLimits)
  // One object swapped whole, so a reader never sees a new config with an old catalogue.
  let current = { config: options.config, catalog: new Catalog(options.config) }
  // The credentials it holds are scrubbed by value from upstream text (util/known-secrets.ts);
  // after a reload, the previous config's too, for the requests still using its providers.
  const routeCooldowns = new RouteCooldowns(now)
  const secretsGroup = `config ${instanceId}`
  const webhooks = new WebhookSender(db, { now, pollMs: options.config.webhookPollMs, ...options.webhooks })
  knownSecrets.set(secretsGroup, configSecrets(options.config))
  const activity = new ActivityWriter(db, { now, retentionDays: options.config.activityRetentionDays, ...options.activity })
  return {
    get config() {
      return current.config
    },
    db,
    reportsDb: options.database.reports,
    now,
    get catalog() {
      return current.catalog
    },
    reloadCatalog(next) {
      const config: Config = { ...current.config, providers: next.providers, models: next.models, aliases: next.aliases, configFile: next.configFile }
      knownSecrets.set(`${secretsGroup} previous`, configSecrets(current.config))
      knownSecrets.set(secretsGroup, configSecrets(config))
      current = { config, catalog: new Catalog(config, current.catalog.created) }
      routeCooldowns.retain(current.catalog.listModels().flatMap((model) => model.routes))
    },
    readiness: new Readiness(),
    keys,
    users,
    userQuotas,
    customModels: new CustomModelStore(db),
    authenticator: new Authenticator(keys, new UserTokenVerifier(options.config.oidc, options.userTokens), users, rateLimiter),
    rateLimiter,
    payers: new PayerDirectory(db, now, userQuotas),
    holds,
    sweeper,
    routeCooldowns,
    webhooks,
    idempotentCalls,
    activity,
    close: () => {
      activity.stop()
      sweeper.stop()
      webhooks.stop()
      routeCooldowns.close()
      idempotentCalls.stop()
      counter.close()
      knownSecrets.forget(secretsGroup)
      knownSecrets.forget(`${secretsGroup} previous`)
    },
  }
}
