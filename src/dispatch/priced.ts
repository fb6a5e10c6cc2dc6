import type { Caller } from '../auth/authenticate'
import type { ModelType } from '../catalog/catalog-schema'
import { type ResolvedModel, requireModelType, resolveModel } from '../catalog/resolve-model'
import { ModelNotSupportedError } from '../errors/kinds'
import type { MediaCapability } from '../providers/adapter'
import type { Services } from '../services/services'
import type { BilledCall } from './billed-call'
import type { Route, UpstreamAnswer } from './surface'

/**
 * The surfaces billed by what the upstream returned rather than by token usage (embeddings,
 * images, speech, transcriptions): a catalogue model of the endpoint's type, the routes whose
 * API serves the endpoint, and a price read off the answer.
 */

/** What an upstream answer cost, what to record of it, and the client's reply once settled. */
export interface PricedAnswer {
  /** The charge; throws UntrustedUsageError when the upstream's counts behind it cannot be trusted. */
  cost: () => bigint
  usage: Record<string, unknown>
  respond(cost: number): Response
}

/** A catalogue model named by its own id: the only kind a media endpoint serves. */
export type CatalogueModel = Extract<ResolvedModel, { kind: 'model' }>

/**
 * The model a media endpoint serves: it must exist for the caller and be allowed to it, be a
 * catalogue model (aliases and custom models are chat-only: 400 model_not_supported) and be
 * of the endpoint's type (`endpoint` is the gateway's path, for the message: `/v1/embeddings`).
 */
export async function resolveTypedModel(
  services: Pick<Services, 'catalog' | 'customModels'>,
  caller: Caller,
  modelId: string,
  type: ModelType,
  endpoint: string,
): Promise<CatalogueModel> {
  const resolved = await resolveModel(services, caller, modelId)
  if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${modelId}' is served by /v1/chat/completions only.`, { param: 'model' })
  requireModelType(resolved, type, endpoint)
  return resolved
}

/** A route whose API has OpenAI's media endpoints: the client's body goes there as it is. */
export type MediaRoute = Route & { media: MediaCapability }

export function mediaRoute(route: Route): MediaRoute | undefined {
  const { media } = route.adapter
  return media ? { ...route, media } : undefined
}

/**
 * Prices what the route that answered returned, settles the call for it (capped at the hold,
 * against the model that priced it and the provider that served it) and answers the client
 * with the credits taken. Throwing means the upstream answered with something unusable: the
 * dispatcher then releases the hold.
 */
export async function deliverPriced<R extends Route>(
  call: BilledCall,
  answer: UpstreamAnswer<R>,
  price: (response: Response, route: R) => Promise<PricedAnswer>,
): Promise<Response> {
  const priced = await price(answer.response, answer.route)
  const settled = await call.settleCost(answer.route, priced.cost, priced.usage)
  return priced.respond(settled.cost)
}
