import type { ProviderConfig } from '../providers/provider-config'
import type { AliasEntry, CatalogEntries, ModelEntry } from './catalog-schema'
import { isModelServed } from './coverage'

/**
 * The models this gateway serves, from the config: a model is available when at least one of
 * its routes goes to a configured provider; an alias when at least one target is available.
 */
export class Catalog {
  private readonly models: Map<string, ModelEntry>
  private readonly aliases: Map<string, AliasEntry>
  private readonly providers: Map<string, ProviderConfig>

  constructor(
    config: CatalogEntries,
    /** Unix seconds shown as every catalogue model's `created`. */
    readonly created: number = Math.floor(Date.now() / 1000),
  ) {
    this.models = new Map(config.models.filter((model) => isModelServed(model, config.providers)).map((model) => [model.id, model]))
    this.aliases = new Map(config.aliases.filter((alias) => alias.targets.some((target) => this.models.has(target))).map((alias) => [alias.id, alias]))
    this.providers = config.providers
  }

  listModels(): ModelEntry[] {
    return [...this.models.values()]
  }

  listAliases(): AliasEntry[] {
    return [...this.aliases.values()]
  }

  model(id: string): ModelEntry | undefined {
    return this.models.get(id)
  }

  alias(id: string): AliasEntry | undefined {
    return this.aliases.get(id)
  }

  provider(name: string): ProviderConfig | undefined {
    return this.providers.get(name)
  }
}
