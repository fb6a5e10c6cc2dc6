import { DEFAULT_FREE_LIMITS, type MinuteLimits } from '../auth/rate-limit'
import type { OidcConfig } from '../auth/user-tokens'
import type { AliasEntry, ModelEntry } from '../catalog/catalog-schema'
import { type LogLevel, logLevelOf } from '../observability/log'
import type { TracesConfig } from '../observability/tracing'
import type { ProviderConfig } from '../providers/provider-config'
import type { UpstreamClientKind } from '../providers/registry'
import { BUILTIN_SOURCE, configFilePath, loadCatalog } from './config-file'
import { checkEnvironment, creditLease, type Env, listenPort, minuteLimit, upstreamConnections } from './environment'
import { resolveProviders } from './providers'
import { tracesConfig } from './traces'
import { workerCount } from './workers'

/** Everything the gateway reads from outside, checked once at start (docs/configuration.md#configuration). */
export interface Config {
  host: string
  port: number
  databaseUrl: string | undefined
  dataDir: string
  adminToken: string | undefined
  /** Reads GET /metrics (so does the admin token); without either, /metrics does not exist (docs/operations.md#metrics). */
  metricsToken: string | undefined
  oidc: OidcConfig | undefined
  redisUrl: string | undefined
  /** How long a hold outlives its process's last heartbeat (docs/billing.md#the-sweep). */
  holdTtlMs: number
  /** The most one credit lease reserves, in micro-credits (docs/billing.md#credit-lease); undefined: no leases, every call holds exactly. */
  creditLeaseMicros: bigint | undefined
  /**
   * How many upstream requests `fetch` may run at once (Bun's `BUN_CONFIG_MAX_HTTP_REQUESTS`,
   * 256 by default): each relayed stream holds one for its whole length.
   */
  maxUpstreamConnections: number
  /**
   * How provider calls reach the network: `own`, the gateway's HTTP/1.1 client (upstream-http/,
   * the default), or `fetch`, Bun's global fetch for everything (docs/configuration.md).
   */
  upstreamClient: UpstreamClientKind
  /** The least severe log line written (docs/operations.md#logs). */
  logLevel: LogLevel
  /** After SIGTERM or SIGINT, how long the listener keeps serving while readiness says 503 (docs/operations.md#shutdown). */
  drainMs: number
  /** After the listener closes, how long requests and streams in flight may take to finish. */
  shutdownTimeoutMs: number
  /** The config file the catalogue came from; undefined: the built-in catalogue. */
  configFile: string | undefined
  providers: Map<string, ProviderConfig>
  models: ModelEntry[]
  aliases: AliasEntry[]
  /** Where spans are exported (OTLP over HTTP), when an OTLP endpoint is set (docs/operations.md#traces). */
  traces: TracesConfig | undefined
  /** Processes `serve` runs on the one port (docs/operations.md#workers); `--workers` overrides it. */
  workers: number
  /** Per caller, on the free endpoints (docs/operations.md#limits): `TOLLGATE_FREE_RPM`, `TOLLGATE_FREE_TPM`. */
  freeLimits: MinuteLimits
  /** How often each instance looks for alerts and sends the webhook deliveries due (docs/operations.md#alerts): `TOLLGATE_WEBHOOK_POLL_MS`. */
  webhookPollMs: number
  /** Days request activity is kept (docs/operations.md#request-activity): `TOLLGATE_ACTIVITY_RETENTION_DAYS`, default 30; 0 records none. */
  activityRetentionDays: number
}

/**
 * The environment and the config file, checked. `fileText`, when given, is the config file's
 * content as already read (a worker of `serve --workers N` is handed the text its primary last
 * loaded, so every worker runs the same file and a restart never meets a broken one); the file's
 * path still names it in messages.
 */
export function loadConfig(env: Env = process.env, fileText?: string): Config {
  const { vars, set } = checkEnvironment(env)
  const port = listenPort(vars.PORT)

  const maxUpstreamConnections = upstreamConnections(vars.TOLLGATE_MAX_UPSTREAM_CONNECTIONS, vars.BUN_CONFIG_MAX_HTTP_REQUESTS)

  const { catalog, source } = loadCatalog(configFilePath(vars.TOLLGATE_CONFIG), set, fileText)
  return {
    host: vars.HOST ?? '127.0.0.1',
    port,
    databaseUrl: vars.DATABASE_URL,
    dataDir: vars.TOLLGATE_DATA_DIR ?? './data',
    adminToken: vars.TOLLGATE_ADMIN_TOKEN,
    metricsToken: vars.TOLLGATE_METRICS_TOKEN,
    oidc: vars.TOLLGATE_OIDC_ISSUER
      ? {
          issuer: vars.TOLLGATE_OIDC_ISSUER,
          audience: vars.TOLLGATE_OIDC_AUDIENCE,
          jwksUrl: vars.TOLLGATE_OIDC_JWKS_URL,
          scope: vars.TOLLGATE_OIDC_SCOPE ?? 'inference',
        }
      : undefined,
    redisUrl: vars.REDIS_URL,
    holdTtlMs: Number(vars.TOLLGATE_HOLD_TTL_SECONDS ?? 120) * 1000,
    creditLeaseMicros: creditLease(vars.TOLLGATE_CREDIT_LEASE),
    maxUpstreamConnections,
    upstreamClient: vars.TOLLGATE_UPSTREAM_CLIENT ?? 'auto',
    logLevel: logLevelOf(vars.TOLLGATE_LOG_LEVEL),
    drainMs: Math.round(Number(vars.TOLLGATE_DRAIN_SECONDS ?? 5) * 1000),
    shutdownTimeoutMs: Math.round(Number(vars.TOLLGATE_SHUTDOWN_TIMEOUT_SECONDS ?? 60) * 1000),
    configFile: source === BUILTIN_SOURCE ? undefined : source,
    providers: resolveProviders(catalog.providers, set, source),
    models: catalog.models,
    aliases: catalog.aliases ?? [],
    traces: tracesConfig(vars),
    workers: workerCount(vars.TOLLGATE_WORKERS, 'TOLLGATE_WORKERS', vars.DATABASE_URL),
    freeLimits: {
      rpm: minuteLimit(vars.TOLLGATE_FREE_RPM, DEFAULT_FREE_LIMITS.rpm),
      tpm: minuteLimit(vars.TOLLGATE_FREE_TPM, DEFAULT_FREE_LIMITS.tpm),
    },
    webhookPollMs: Number(vars.TOLLGATE_WEBHOOK_POLL_MS ?? 1000),
    activityRetentionDays: Number(vars.TOLLGATE_ACTIVITY_RETENTION_DAYS ?? 30),
  }
}
