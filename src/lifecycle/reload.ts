import type { Catalog } from '../catalog/catalog'
import { catalogCoverage } from '../catalog/coverage'
import { type Config, loadConfig } from '../config/config'
import { ConfigError } from '../config/config-error'
import { logEvent } from '../observability/log'
import { catalogWarnings, describeConfigSource } from './start-summary'

/** What a reload reads and replaces (the services' own): the config and the catalogue new requests see. */
export interface ReloadableCatalog {
  readonly config: Config
  readonly catalog: Catalog
  reloadCatalog(next: Pick<Config, 'providers' | 'models' | 'aliases' | 'configFile'>): void
}

/**
 * SIGHUP (docs/operations.md#reload): the configuration is loaded again, as a start would load
 * it, and its catalogue (providers, models, aliases, prices) replaces the running one for new
 * requests. A request already running keeps the entries it read. A configuration that does not
 * load changes nothing: the error names the file and the field, and the old catalogue serves on.
 * Other settings (listener, database, tokens) are the start's: the environment a process sees
 * does not change, so they could not differ anyway.
 */
export function reloadCatalog(services: ReloadableCatalog, load: () => Config = () => loadConfig(process.env)): boolean {
  const next = loadForReload(load)
  if (!next) return false
  const before = new Set(services.catalog.listModels().map((model) => model.id))
  services.reloadCatalog(next)
  const after = new Set(services.catalog.listModels().map((model) => model.id))
  const coverage = catalogCoverage(services.config)
  logEvent('info', 'config reloaded: new requests use it', {
    config: describeConfigSource(services.config),
    models: coverage.servedPerProvider,
    models_served: coverage.servedModels,
    aliases_served: coverage.servedAliases,
    added: [...after].filter((id) => !before.has(id)),
    removed: [...before].filter((id) => !after.has(id)),
  })
  for (const line of catalogWarnings(services.config)) logEvent(line.level, line.message, line.fields)
  return true
}

/** The config loaded again, or undefined when it does not load: then the refusal is logged, naming the file and the field. */
export function loadForReload(load: () => Config): Config | undefined {
  try {
    return load()
  } catch (error) {
    const message = error instanceof ConfigError ? error.message : `unexpected: ${error instanceof Error ? error.message : String(error)}`
    logEvent('error', `config reload refused, the running config stays: ${message}`, { error: message, ...(error instanceof ConfigError ? error.fields : {}) })
    return undefined
  }
}
