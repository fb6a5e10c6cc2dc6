import type { TracesConfig } from '../observability/tracing'
import { ConfigError } from './config-error'
import type { EnvVars } from './environment'

/**
 * Where spans go, from OpenTelemetry's standard exporter variables (the OTLP exporter
 * specification): the signal-specific endpoint is used as it is, the general one gets
 * `/v1/traces` appended. Undefined when neither is set: tracing is off.
 */
export function tracesConfig(vars: EnvVars): TracesConfig | undefined {
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
