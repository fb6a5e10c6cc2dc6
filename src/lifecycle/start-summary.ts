import { microsToCredits } from '../billing/money'
import { catalogCoverage } from '../catalog/coverage'
import type { Config } from '../config/config'
import { describeDatabase } from '../db/describe-database'
import { type LogFields, type LogLevel, logEvent } from '../observability/log'

/**
 * What a starting gateway says about itself (docs/operations.md#start-up-summary): one summary
 * line, then a warning for everything a newcomer would otherwise discover as a 404: a model
 * hidden because no provider of its routes has a credential, an alias with hidden targets, and,
 * loudest, a gateway that serves no model at all.
 */
export interface StartLine {
  level: LogLevel
  message: string
  fields: LogFields
}

export interface StartFacts {
  version: string
  config: Config
  /** The address the listener took (`http://127.0.0.1:8080/`). */
  listen: string
  /** Worker processes of `serve --workers N`, named in the summary when more than one. */
  workers?: number
}

/** The summary and the warnings, in the order they are logged. */
export function startLines(facts: StartFacts): StartLine[] {
  const { config } = facts
  const coverage = catalogCoverage(config)
  const summary: StartLine = {
    level: 'info',
    message: 'tollgate started',
    fields: {
      version: facts.version,
      database: describeDatabase(config),
      config: describeConfigSource(config),
      listen: facts.listen,
      models: coverage.servedPerProvider,
      models_served: coverage.servedModels,
      aliases_served: coverage.servedAliases,
      features: featuresOf(config),
      credit_lease_credits: config.creditLeaseMicros === undefined ? null : microsToCredits(config.creditLeaseMicros),
      ...(facts.workers !== undefined && facts.workers > 1 ? { workers: facts.workers } : {}),
    },
  }
  return [summary, ...catalogWarnings(config)]
}

/** Which optional parts serve (docs/operations.md#start-up-summary): what an operator would otherwise find out by trying. */
export interface Features {
  /** /console: on with an admin token. */
  console: boolean
  /** /admin/v1: on with an admin token. */
  admin_api: boolean
  /** /metrics: on with a metrics or an admin token. */
  metrics: boolean
  /** Spans exported over OTLP: on with an OTLP endpoint. */
  tracing: boolean
  /** Rate-limit counters shared through Redis; off: each instance (or primary) counts alone. */
  redis: boolean
  /** Calls held from in-memory credit leases; off: each call is held exactly in the database. */
  credit_lease: boolean
  /** Every request to a billable or admin endpoint recorded; off with TOLLGATE_ACTIVITY_RETENTION_DAYS=0. */
  request_activity: boolean
}

export function featuresOf(config: Config): Features {
  const admin = config.adminToken !== undefined
  return {
    console: admin,
    admin_api: admin,
    metrics: admin || config.metricsToken !== undefined,
    tracing: config.traces !== undefined,
    redis: config.redisUrl !== undefined,
    credit_lease: config.creditLeaseMicros !== undefined,
    request_activity: config.activityRetentionDays > 0,
  }
}

/**
 * The warnings about a catalogue, logged at start and again after a reload. With a config file
 * every hidden model is a warning: the operator listed it. The built-in catalogue lists every
 * major provider on purpose, and hides those without a credential by design: one `info` line
 * per provider says what would turn it on.
 */
export function catalogWarnings(config: Config): StartLine[] {
  const coverage = catalogCoverage(config)
  const lines: StartLine[] = []
  if (config.configFile === undefined) {
    for (const [provider, credential] of Object.entries(coverage.missingCredentials)) {
      const models = coverage.hiddenModels.filter((hidden) => hidden.providers.includes(provider)).map((hidden) => hidden.model)
      lines.push({
        level: 'info',
        message: `provider ${provider} is off: set ${credential} to serve its models`,
        fields: { provider, set: credential, models },
      })
    }
  } else {
    for (const hidden of coverage.hiddenModels) {
      lines.push({
        level: 'warn',
        message: `model ${hidden.model} is hidden: no provider of its routes has a credential (set ${hidden.credentials.join(' or ')})`,
        fields: { model: hidden.model, providers: hidden.providers, set: hidden.credentials, aliases: hidden.aliases },
      })
    }
    for (const skipped of coverage.skippedRoutes) {
      lines.push({
        level: 'warn',
        message: `provider ${skipped.provider} has no credential (set ${skipped.credential}): its routes are skipped, its models are served by their other routes only`,
        fields: { provider: skipped.provider, set: skipped.credential, models: skipped.models },
      })
    }
  }
  for (const alias of coverage.aliasesWithHiddenTargets) {
    lines.push({
      level: 'warn',
      message: alias.served
        ? `alias ${alias.alias} has hidden targets: it falls back among the others only`
        : `alias ${alias.alias} is hidden: none of its targets is served`,
      fields: { alias: alias.alias, hidden_targets: alias.hiddenTargets, served: alias.served },
    })
  }
  if (coverage.servedModels === 0) {
    lines.push({
      level: 'warn',
      message: 'NO MODEL IS SERVED: every model request will be answered 404',
      fields: { fix: noModelFix(config, coverage.missingCredentials) },
    })
  }
  return lines
}

function noModelFix(config: Config, missingCredentials: Record<string, string>): string {
  const credentials = [...new Set(Object.values(missingCredentials))]
  if (config.configFile === undefined) {
    return `set a provider credential (${credentials.join(', ')}), VERTEX_PROJECT for Vertex AI or OLLAMA_BASE_URL for a local Ollama, and restart; or point TOLLGATE_CONFIG at a config file`
  }
  if (config.models.length === 0) return `${config.configFile} lists no model: add models, then send SIGHUP or restart`
  // A reload re-reads the file, not the environment: a new variable needs a restart.
  return `set the credentials ${config.configFile} names (${credentials.join(', ')}) and restart`
}

export function describeConfigSource(config: Pick<Config, 'configFile'>): string {
  return config.configFile ?? 'built-in catalogue'
}

export function logStartSummary(facts: StartFacts): void {
  for (const line of startLines(facts)) logEvent(line.level, line.message, line.fields)
}
