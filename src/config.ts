import { type Static, Type } from '@sinclair/typebox'
import { DEFAULT_FREE_LIMITS, type MinuteLimits } from './auth/rate-limit'
import { creditsToMicros } from './billing/money'
import type { AliasEntry, ModelEntry, ProviderEntry } from './catalog/catalog-schema'
import { ConfigError, checkConfig } from './config-error'
import { BUILTIN_SOURCE, configFilePath, loadCatalog, resolveProviders } from './config-file'
import { MAX_FETCH_CONCURRENCY } from './http/upstream-concurrency'
import { LOG_LEVELS, type LogLevel, logLevelOf } from './observability/log'

/** How provider calls reach the network (TOLLGATE_UPSTREAM_CLIENT): streams by the own client and whole answers by fetch, or everything by one. */
export type UpstreamClientKind = 'auto' | 'own' | 'fetch'

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
}

export interface TracesConfig {
  /** The full URL spans are posted to: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  url: string
  /** Sent with every export (a collector's API key): `OTEL_EXPORTER_OTLP_HEADERS`, overridden by `OTEL_EXPORTER_OTLP_TRACES_HEADERS`. */
  headers: Record<string, string>
  serviceName: string
}

export interface OidcConfig {
  issuer: string
  audience: string | undefined
  jwksUrl: string | undefined
  scope: string
}

/** A provider with its credential resolved from the environment. */
export interface ProviderConfig extends ProviderEntry {
  name: string
  /** The API key or access token, when the provider takes one and it is set. */
  credential: string | undefined
  /** Vertex: the service account whose key signs access tokens, when one is configured. */
  serviceAccount: ServiceAccount | undefined
  /** Whether the provider can be called: its credential is set, or it needs none. */
  configured: boolean
  pollIntervalMs: number
  timeoutMs: number
  jobTimeoutMs: number
  streamIdleTimeoutMs: number
}

export interface ServiceAccount {
  clientEmail: string
  privateKey: string
  tokenUri: string
}

const EnvSchema = Type.Object({
  PORT: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  TOLLGATE_DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  TOLLGATE_CONFIG: Type.Optional(Type.String({ minLength: 1 })),
  TOLLGATE_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
  TOLLGATE_METRICS_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
  TOLLGATE_OIDC_ISSUER: Type.Optional(Type.String({ pattern: '^https?://' })),
  TOLLGATE_OIDC_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  TOLLGATE_OIDC_JWKS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  TOLLGATE_OIDC_SCOPE: Type.Optional(Type.String({ pattern: '^\\S+$' })),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  TOLLGATE_HOLD_TTL_SECONDS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })),
  TOLLGATE_CREDIT_LEASE: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}(\\.[0-9]{1,6})?$' })),
  TOLLGATE_MAX_UPSTREAM_CONNECTIONS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}$' })),
  TOLLGATE_UPSTREAM_CLIENT: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('own'), Type.Literal('fetch')])),
  TOLLGATE_FREE_RPM: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  TOLLGATE_FREE_TPM: Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$' })),
  BUN_CONFIG_MAX_HTTP_REQUESTS: Type.Optional(Type.String()),
  TOLLGATE_LOG_LEVEL: Type.Optional(Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)))),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_HEADERS: Type.Optional(Type.String()),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: Type.Optional(Type.String()),
  OTEL_SERVICE_NAME: Type.Optional(Type.String()),
  TOLLGATE_DRAIN_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}(\\.[0-9]{1,3})?$' })),
  TOLLGATE_SHUTDOWN_TIMEOUT_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}(\\.[0-9]{1,3})?$' })),
  // Checked by workerCount, whose message names the variable and the rule.
  TOLLGATE_WORKERS: Type.Optional(Type.String()),
})

export type Env = Record<string, string | undefined>

/**
 * The environment and the config file, checked. `fileText`, when given, is the config file's
 * content as already read (a worker of `serve --workers N` is handed the text its primary last
 * loaded, so every worker runs the same file and a restart never meets a broken one); the file's
 * path still names it in messages.
 */
export function loadConfig(env: Env = process.env, fileText?: string): Config {
  // Empty variables count as unset, as shells and container runtimes often leave them so.
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''))
  const vars = checkConfig(EnvSchema, pick(set, Object.keys(EnvSchema.properties)), 'environment', (path) => path.slice(1))
  const port = Number(vars.PORT ?? 8080)
  if (port > 65535) throw new ConfigError('environment: PORT must be between 0 and 65535')

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
  }
}

/** A per-minute limit from its variable: unset is the default, 0 is no limit. */
function minuteLimit(value: string | undefined, fallback: number | null): number | null {
  if (value === undefined) return fallback
  return Number(value) === 0 ? null : Number(value)
}

/** More processes than this is a typo, not a machine: each worker holds its own database pool. */
export const MAX_WORKERS = 256

/**
 * The number of `serve` processes (docs/operations.md#workers). One unless set: measured on two
 * cores, one process with credit leases serves more billed calls per second at a lower tail than
 * two (`bun run bench`), and the embedded database allows only one. `setting` names where the
 * value came from (`TOLLGATE_WORKERS` or `--workers`) so the error points at it.
 */
export function workerCount(value: string | undefined, setting: string, databaseUrl: string | undefined): number {
  if (value === undefined) return 1
  if (!/^[0-9]{1,4}$/.test(value) || Number(value) < 1 || Number(value) > MAX_WORKERS) {
    throw new ConfigError(`${setting} must be a whole number from 1 to ${MAX_WORKERS} (got ${JSON.stringify(value.slice(0, 40))})`)
  }
  const count = Number(value)
  if (count > 1 && !databaseUrl) {
    throw new ConfigError(
      `${setting}=${count}: the embedded database is single-process; several workers need Postgres (set DATABASE_URL) or set ${setting} to 1`,
    )
  }
  return count
}

/**
 * OpenTelemetry's standard exporter variables (the OTLP exporter specification): the
 * signal-specific endpoint is used as it is, the general one gets `/v1/traces` appended.
 */
function tracesConfig(vars: Static<typeof EnvSchema>): TracesConfig | undefined {
  const base = vars.OTEL_EXPORTER_OTLP_ENDPOINT
  const url = vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`)
  if (url === undefined) return undefined
  return {
    url,
    headers: {
      ...otlpHeaders(vars.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
      ...otlpHeaders(vars.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    },
    serviceName: vars.OTEL_SERVICE_NAME ?? 'tollgate',
  }
}

/** `name=value,name=value`, values percent-encoded; the message never quotes a value (they are API keys). */
function otlpHeaders(value: string | undefined, variable: string): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const pair of (value ?? '').split(',')) {
    if (pair.trim() === '') continue
    const separator = pair.indexOf('=')
    const name = pair.slice(0, separator).trim().toLowerCase()
    let decoded: string | undefined
    try {
      decoded = decodeURIComponent(pair.slice(separator + 1).trim())
    } catch {
      decoded = undefined
    }
    if (separator <= 0 || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name) || decoded === undefined || /[\r\n]/.test(decoded))
      throw new ConfigError(`environment: ${variable} must be a list of name=value pairs separated by commas`)
    headers[name] = decoded
  }
  return headers
}

/**
 * The most one credit lease may reserve (docs/billing.md#credit-lease), in micro-credits: each
 * lease asks for what its wallet's rate needs, up to this. Unset: DEFAULT_CREDIT_LEASE_CREDITS;
 * 0 turns leases off (every call is held exactly).
 */
function creditLease(value: string | undefined): bigint | undefined {
  if (value === undefined) return DEFAULT_CREDIT_LEASE_CREDITS * 1_000_000n
  const micros = creditsToMicros(Number(value))
  return micros === undefined || micros === 0n ? undefined : micros
}

const DEFAULT_CREDIT_LEASE_CREDITS = 5n

/** Enough for ten thousand streams relayed at once; more costs file descriptors and little else. */
const DEFAULT_UPSTREAM_CONNECTIONS = 10_000

/**
 * Tollgate's own variable wins; an operator who already sets Bun's variable (and not ours) keeps
 * what they chose, so the gateway has no reason to restart itself.
 */
function upstreamConnections(tollgateValue: string | undefined, bunValue: string | undefined): number {
  const wanted = Number(tollgateValue ?? (bunValue !== undefined && /^[1-9][0-9]{0,4}$/.test(bunValue) ? bunValue : DEFAULT_UPSTREAM_CONNECTIONS))
  if (wanted > MAX_FETCH_CONCURRENCY) throw new ConfigError(`environment: TOLLGATE_MAX_UPSTREAM_CONNECTIONS must be at most ${MAX_FETCH_CONCURRENCY}`)
  return wanted
}

function pick(source: Env, keys: string[]): Env {
  return Object.fromEntries(keys.filter((key) => source[key] !== undefined).map((key) => [key, source[key]]))
}
