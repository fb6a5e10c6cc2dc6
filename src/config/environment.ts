import { type Static, Type } from '@sinclair/typebox'
import { creditsToMicros } from '../billing/money'
import { MAX_FETCH_CONCURRENCY } from '../http/upstream-concurrency'
import { LOG_LEVELS } from '../observability/log'
import { ConfigError, checkConfig } from './config-error'

// The environment variables the gateway reads (docs/configuration.md#configuration), checked,
// and the settings whose value needs more than the schema says.

export type Env = Record<string, string | undefined>

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
  TOLLGATE_ACTIVITY_RETENTION_DAYS: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
  TOLLGATE_WEBHOOK_POLL_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{1,4}$' })),
  TOLLGATE_DRAIN_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}(\\.[0-9]{1,3})?$' })),
  TOLLGATE_SHUTDOWN_TIMEOUT_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}(\\.[0-9]{1,3})?$' })),
  // Checked by workerCount, whose message names the variable and the rule.
  TOLLGATE_WORKERS: Type.Optional(Type.String()),
})

/** The gateway's variables as checked: each one set is there, and matches its pattern. */
export type EnvVars = Static<typeof EnvSchema>

/**
 * The environment, checked: `vars`, the gateway's own variables; `set`, every variable that is
 * set (the catalogue reads the ones its providers name).
 */
export function checkEnvironment(env: Env): { vars: EnvVars; set: Env } {
  // Empty variables count as unset, as shells and container runtimes often leave them so.
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''))
  const vars = checkConfig(EnvSchema, pick(set, Object.keys(EnvSchema.properties)), 'environment', (path) => path.slice(1))
  return { vars, set }
}

/** The port `serve` listens on: PORT, else 8080. */
export function listenPort(value: string | undefined): number {
  const port = Number(value ?? 8080)
  if (port > 65535) throw new ConfigError('environment: PORT must be between 0 and 65535')
  return port
}

/** A per-minute limit from its variable: unset is the default, 0 is no limit. */
export function minuteLimit(value: string | undefined, fallback: number | null): number | null {
  if (value === undefined) return fallback
  return Number(value) === 0 ? null : Number(value)
}

/**
 * The most one credit lease may reserve (docs/billing.md#credit-lease), in micro-credits: each
 * lease asks for what its wallet's rate needs, up to this. Unset: DEFAULT_CREDIT_LEASE_CREDITS;
 * 0 turns leases off (every call is held exactly).
 */
export function creditLease(value: string | undefined): bigint | undefined {
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
export function upstreamConnections(tollgateValue: string | undefined, bunValue: string | undefined): number {
  const wanted = Number(tollgateValue ?? (bunValue !== undefined && /^[1-9][0-9]{0,4}$/.test(bunValue) ? bunValue : DEFAULT_UPSTREAM_CONNECTIONS))
  if (wanted > MAX_FETCH_CONCURRENCY) throw new ConfigError(`environment: TOLLGATE_MAX_UPSTREAM_CONNECTIONS must be at most ${MAX_FETCH_CONCURRENCY}`)
  return wanted
}

function pick(source: Env, keys: string[]): Env {
  return Object.fromEntries(keys.filter((key) => source[key] !== undefined).map((key) => [key, source[key]]))
}
