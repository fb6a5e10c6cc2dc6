import type { ProviderConfig } from '../providers/provider-config'
import { adapterFor } from '../providers/registry'
import type { CatalogEntries, ModelEntry } from './catalog-schema'

/**
 * What a configuration serves and what it hides, for the start-up summary and a reload
 * (docs/operations.md#start-up-summary). A model is served when one of its routes goes to a
 * configured provider (the rule `Catalog` applies); otherwise every provider it routes to lacks
 * its credential, and the fix is to set one of them.
 */
export interface CatalogCoverage {
  /** Per configured provider, how many served models route to it (a model with two providers counts for each). */
  servedPerProvider: Record<string, number>
  servedModels: number
  servedAliases: number
  hiddenModels: HiddenModel[]
  /** Aliases with at least one hidden target, served or not. */
  aliasesWithHiddenTargets: AliasWithHiddenTargets[]
  /** The credentials that would turn on a provider that has none, by provider. */
  missingCredentials: Record<string, string>
  /** Served models with a route skipped because its provider has no credential: a failover path that is not there. */
  skippedRoutes: SkippedRoutes[]
}

export interface SkippedRoutes {
  provider: string
  credential: string
  models: string[]
}

export interface HiddenModel {
  model: string
  /** The providers its routes go to, none of them configured. */
  providers: string[]
  /** What would turn each of them on (an environment variable, or a service-account key file for Vertex). */
  credentials: string[]
  /** Aliases that name it as a target. */
  aliases: string[]
}

export interface AliasWithHiddenTargets {
  alias: string
  hiddenTargets: string[]
  /** False when every target is hidden: the alias itself is then not served. */
  served: boolean
}

export function isModelServed(model: ModelEntry, providers: ReadonlyMap<string, ProviderConfig>): boolean {
  return model.routes.some((route) => providers.get(route.provider)?.configured)
}

export function catalogCoverage(config: CatalogEntries): CatalogCoverage {
  const served = config.models.filter((model) => isModelServed(model, config.providers))
  const servedIds = new Set(served.map((model) => model.id))
  const servedPerProvider: Record<string, number> = {}
  for (const model of served) {
    for (const provider of new Set(model.routes.map((route) => route.provider))) {
      if (config.providers.get(provider)?.configured) servedPerProvider[provider] = (servedPerProvider[provider] ?? 0) + 1
    }
  }
  const missingCredentials: Record<string, string> = {}
  for (const provider of config.providers.values()) {
    if (!provider.configured) missingCredentials[provider.name] = credentialOf(provider)
  }
  const hiddenModels = config.models
    .filter((model) => !servedIds.has(model.id))
    .map((model): HiddenModel => {
      const providers = [...new Set(model.routes.map((route) => route.provider))]
      return {
        model: model.id,
        providers,
        credentials: providers.flatMap((provider) => missingCredentials[provider] ?? []),
        aliases: config.aliases.filter((alias) => alias.targets.includes(model.id)).map((alias) => alias.id),
      }
    })
  const aliasesWithHiddenTargets = config.aliases.flatMap((alias): AliasWithHiddenTargets[] => {
    const hiddenTargets = alias.targets.filter((target) => !servedIds.has(target))
    return hiddenTargets.length === 0 ? [] : [{ alias: alias.id, hiddenTargets, served: hiddenTargets.length < alias.targets.length }]
  })
  const skippedRoutes = Object.entries(missingCredentials).flatMap(([provider, credential]): SkippedRoutes[] => {
    const models = served.filter((model) => model.routes.some((route) => route.provider === provider)).map((model) => model.id)
    return models.length === 0 ? [] : [{ provider, credential, models }]
  })
  return {
    servedPerProvider,
    servedModels: served.length,
    servedAliases: config.aliases.filter((alias) => alias.targets.some((target) => servedIds.has(target))).length,
    hiddenModels,
    aliasesWithHiddenTargets,
    missingCredentials,
    skippedRoutes,
  }
}

/** What would configure an unconfigured provider: its API's adapter knows where its entries name a credential. */
function credentialOf(provider: ProviderConfig): string {
  return adapterFor(provider).missingCredential(provider)
}
