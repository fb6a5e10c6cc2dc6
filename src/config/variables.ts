import { builtinCatalog } from '../catalog/builtin'
import type { EnvVars } from './environment'

/**
 * Every environment variable the gateway reads, as `tollgate --help` lists it
 * (docs/configuration.md#environment-variables). The gateway's own are keyed by the environment
 * schema's names, so the type checker refuses a variable added there without a line here; the
 * variables read elsewhere (the built-in catalogue's credentials, the proxies) follow, the
 * credentials read from the catalogue itself. test/cli/help.test.ts holds every variable the
 * source reads to appearing in the list.
 */
export interface VariableHelp {
  meaning: string
  /** What applies when it is unset. */
  default: string
}

const GATEWAY_VARIABLES: Record<keyof EnvVars, VariableHelp> = {
  PORT: { meaning: 'listen port, 0 to 65535 (--port beats it)', default: '8080' },
  HOST: { meaning: 'listen address (--host beats it)', default: '127.0.0.1' },
  DATABASE_URL: { meaning: 'postgres://… or postgresql://…: use that Postgres server', default: 'the embedded database' },
  TOLLGATE_DB_WAIT_SECONDS: { meaning: 'how long a start waits for an unreachable Postgres server, 0 to 3600', default: '30' },
  TOLLGATE_DATA_DIR: { meaning: 'where the embedded database lives', default: './data' },
  TOLLGATE_CONFIG: { meaning: 'path of the JSON config file', default: './tollgate.json when present, else the built-in catalogue' },
  TOLLGATE_ADMIN_TOKEN: { meaning: 'bearer token of the admin API and the console', default: 'unset: no admin API, no console' },
  TOLLGATE_METRICS_TOKEN: { meaning: 'bearer token that reads /metrics (the admin token does too)', default: 'unset' },
  TOLLGATE_OIDC_ISSUER: { meaning: 'http(s):// issuer of user tokens', default: 'unset: user tokens are refused' },
  TOLLGATE_OIDC_AUDIENCE: { meaning: 'the client id user tokens must be issued for', default: 'unset: not checked' },
  TOLLGATE_OIDC_JWKS_URL: { meaning: "the issuer's JWKS", default: 'discovered from the issuer' },
  TOLLGATE_OIDC_SCOPE: { meaning: 'the scope a user token must carry', default: 'inference' },
  REDIS_URL: { meaning: 'redis:// or rediss://: rate-limit counters shared between instances', default: 'unset: in-process counters' },
  TOLLGATE_HOLD_TTL_SECONDS: { meaning: "how long a hold outlives its process's last heartbeat", default: '120' },
  TOLLGATE_CREDIT_LEASE: { meaning: 'the most credits one instance reserves on a wallet at once; 0: every call is held exactly', default: '5' },
  TOLLGATE_MAX_UPSTREAM_CONNECTIONS: { meaning: 'upstream requests one process runs at once, at most 65535', default: '10000' },
  TOLLGATE_UPSTREAM_CLIENT: { meaning: 'how provider calls reach the network: auto, own or fetch', default: 'auto' },
  TOLLGATE_FREE_RPM: { meaning: 'requests per minute per caller on the free endpoints; 0: no limit', default: '120' },
  TOLLGATE_FREE_TPM: { meaning: 'tokens per minute count_tokens may count per caller; 0: no limit', default: '10000000' },
  BUN_CONFIG_MAX_HTTP_REQUESTS: { meaning: "Bun's own upstream concurrency setting, kept when set alone", default: 'unset' },
  TOLLGATE_LOG_LEVEL: { meaning: 'the least severe log line written: debug, info, warn or error', default: 'info' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { meaning: 'OTLP/HTTP collector for traces (/v1/traces is appended)', default: 'unset: no tracing' },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { meaning: 'the traces endpoint itself, used as it is', default: 'unset' },
  OTEL_EXPORTER_OTLP_HEADERS: { meaning: 'name=value,… headers sent to the collector', default: 'unset' },
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: { meaning: 'name=value,… headers sent with traces only', default: 'unset' },
  OTEL_SERVICE_NAME: { meaning: "the spans' service name", default: 'tollgate' },
  TOLLGATE_ACTIVITY_RETENTION_DAYS: { meaning: "days each request's activity record is kept, 0 to 9999; 0: nothing is recorded", default: '30' },
  TOLLGATE_WEBHOOK_POLL_MS: { meaning: 'how often each instance sends the webhook deliveries due, 10 to 99999 ms', default: '1000' },
  TOLLGATE_DRAIN_SECONDS: { meaning: 'after SIGTERM or SIGINT, how long /v1/readyz answers 503 while requests are still served', default: '5' },
  TOLLGATE_SHUTDOWN_TIMEOUT_SECONDS: { meaning: 'then, how long requests in flight may take to finish', default: '60' },
  TOLLGATE_WORKERS: { meaning: 'processes serve runs on the one port, 1 to 256 (--workers beats it); above 1 needs Postgres', default: '1' },
}

/** Read by the built-in catalogue to turn providers on, beside their credentials. */
const CATALOGUE_SWITCHES: Record<string, VariableHelp> = {
  VERTEX_PROJECT: { meaning: 'turns Vertex AI on in the built-in catalogue', default: 'unset' },
  VERTEX_LOCATION: { meaning: 'the Vertex AI region', default: 'us-central1' },
  GOOGLE_APPLICATION_CREDENTIALS: { meaning: 'a Google service account key file for Vertex AI', default: 'unset' },
  OLLAMA_BASE_URL: { meaning: 'turns a local Ollama on in the built-in catalogue', default: 'unset' },
}

const PROXY_VARIABLES: Record<string, VariableHelp> = {
  HTTPS_PROXY: { meaning: 'proxy for https upstreams (lower case works too)', default: 'unset' },
  HTTP_PROXY: { meaning: 'proxy for http upstreams (lower case works too)', default: 'unset' },
  NO_PROXY: { meaning: 'hosts reached without the proxy (lower case works too)', default: 'unset' },
}

export interface VariableGroup {
  title: string
  variables: Record<string, VariableHelp>
}

/** Every variable, in the groups --help shows them in. */
export function environmentVariables(): VariableGroup[] {
  return [
    { title: 'gateway', variables: GATEWAY_VARIABLES },
    { title: 'built-in catalogue (a config file names its own credentials)', variables: { ...builtinCredentials(), ...CATALOGUE_SWITCHES } },
    { title: 'upstream proxies', variables: PROXY_VARIABLES },
  ]
}

/** The credentials the built-in catalogue's providers name, Vertex AI's included. */
function builtinCredentials(): Record<string, VariableHelp> {
  const providers = builtinCatalog({ VERTEX_PROJECT: 'listed', OLLAMA_BASE_URL: 'http://listed' }).providers
  const credentials: Record<string, VariableHelp> = {}
  for (const [name, provider] of Object.entries(providers)) {
    const variable = provider.apiKeyEnv ?? provider.accessTokenEnv
    if (variable) credentials[variable] = { meaning: `credential of the ${name} provider: its models are served once it is set`, default: 'unset' }
  }
  return credentials
}
