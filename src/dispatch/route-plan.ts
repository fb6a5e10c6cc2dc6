import type { ModelEntry } from '../catalog/catalog-schema'
import type { ResolvedModel } from '../catalog/resolve-model'
import type { ProviderConfig } from '../config'
import { NoRouteAvailableError } from '../errors/kinds'
import type { ProviderAdapter } from '../providers/adapter'
import { adapterFor } from '../providers/registry'
import type { Services } from '../services'

/** One way to serve a call: a catalogue model through one of its routes. */
export interface RouteOption<Capability extends keyof ProviderAdapter> {
  model: ModelEntry
  provider: ProviderConfig
  adapter: ProviderAdapter & Required<Pick<ProviderAdapter, Capability>>
  /** The provider's own id for the model. */
  upstreamModel: string
}

/**
 * Every route that could serve the request, in the order to try them: a model's routes in
 * config order; an alias's targets in order, each with its routes. Routes whose provider is not
 * configured, or whose API cannot do what is asked, are left out.
 */
export function planRoutes<Capability extends keyof ProviderAdapter>(
  services: Services,
  resolved: ResolvedModel,
  capability: Capability,
): RouteOption<Capability>[] {
  const models =
    resolved.kind === 'model'
      ? [resolved.model]
      : resolved.kind === 'custom'
        ? [resolved.base]
        : resolved.alias.targets.flatMap((target) => services.catalog.model(target) ?? [])
  const options = models.flatMap((model) =>
    model.routes.flatMap((route): RouteOption<Capability>[] => {
      const provider = services.catalog.provider(route.provider)
      const adapter = provider?.configured ? adapterFor(provider) : undefined
      if (!provider || !adapter || !hasCapability(adapter, capability)) return []
      return [{ model, provider, adapter, upstreamModel: route.model }]
    }),
  )
  if (options.length === 0) throw new NoRouteAvailableError('No configured upstream can serve this model on this endpoint.')
  return options
}

function hasCapability<Capability extends keyof ProviderAdapter>(
  adapter: ProviderAdapter,
  capability: Capability,
): adapter is ProviderAdapter & Required<Pick<ProviderAdapter, Capability>> {
  return adapter[capability] !== undefined
}
