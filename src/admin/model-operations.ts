import { Type } from '@sinclair/typebox'
import type { AliasEntry, ModelEntry } from '../catalog/catalog-schema'
import { ModelTypeSchema } from '../catalog/catalog-schema'
import type { Services } from '../services/services'
import { type AdminOperation, defineOperation } from './operation'

/**
 * The catalogue as an operator checks it (docs/operations.md#models): every served model with
 * the aliases that reach it, its limits and prices, and each route with its provider's state in
 * this process: configured or not, and cooling down after failures in a row or not
 * (docs/configuration.md#route-cooldown).
 */

type Route = ModelEntry['routes'][number]

const MODEL_TYPES = ModelTypeSchema.anyOf.map((literal) => literal.const)

function routeView(services: Pick<Services, 'catalog' | 'routeCooldowns'>, route: Route) {
  const provider = services.catalog.provider(route.provider)
  if (!provider) {
    return { provider: route.provider, upstream_model: route.model, configured: false, cooldown_seconds: null, failures: 0, cooling_until: null }
  }
  const state = services.routeCooldowns.stateOf({ provider, upstreamModel: route.model })
  return {
    provider: route.provider,
    upstream_model: route.model,
    configured: true,
    cooldown_seconds: provider.cooldownSeconds,
    failures: state.failures,
    cooling_until: state.coolingUntil === undefined ? null : new Date(state.coolingUntil).toISOString(),
  }
}

function modelView(services: Pick<Services, 'catalog' | 'routeCooldowns'>, model: ModelEntry, aliases: readonly AliasEntry[]) {
  return {
    id: model.id,
    type: model.type,
    aliases: aliases.filter((alias) => alias.targets.includes(model.id)).map((alias) => alias.id),
    context_window: model.contextWindow ?? null,
    max_output_tokens: model.maxOutputTokens ?? null,
    pricing: model.pricing,
    routes: model.routes.map((route) => routeView(services, route)),
  }
}

export const MODEL_OPERATIONS: readonly AdminOperation[] = [
  defineOperation({
    command: ['models', 'list'],
    method: 'GET',
    path: '/models',
    summary: "The catalogue's served models with their aliases, limits, prices and routes, and each route's cooldown state in this process",
    query: Type.Object(
      {
        // A pattern, not a union of literals: the API document keeps a string's description.
        type: Type.Optional(
          Type.String({
            pattern: `^(${MODEL_TYPES.join('|')})$`,
            description: `Only models of this type (${MODEL_TYPES.join(', ')}); absent: every type`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    run: async (services, { query }) => {
      const { catalog } = services
      const aliases = catalog.listAliases()
      return {
        object: 'list' as const,
        data: catalog
          .listModels()
          .filter((model) => query.type === undefined || model.type === query.type)
          .map((model) => modelView(services, model, aliases)),
        aliases: aliases.map((alias) => ({ id: alias.id, strategy: alias.strategy, targets: alias.targets })),
      }
    },
  }),
]
