import type { Config } from './config'

/**
 * Every credential this config holds, by value, for scrubbing from what a client, a log line or
 * a span reads (util/known-secrets.ts): provider keys and access tokens, the admin and metrics
 * tokens, the OTLP exporter's header values (and the token of an `Authorization`-style one), and
 * the passwords in the database and Redis URLs.
 */
export function configSecrets(config: Config): (string | undefined)[] {
  const headerValues = Object.values(config.traces?.headers ?? {})
  return [
    config.adminToken,
    config.metricsToken,
    ...[...config.providers.values()].map((provider) => provider.credential),
    ...headerValues,
    ...headerValues.map((value) => value.split(' ').at(-1)),
    urlPassword(config.databaseUrl),
    urlPassword(config.redisUrl),
  ]
}

function urlPassword(url: string | undefined): string | undefined {
  if (url === undefined) return undefined
  try {
    const password = new URL(url).password
    return password === '' ? undefined : decodeURIComponent(password)
  } catch {
    return undefined
  }
}
