import type { Caller } from '../auth/authenticate'
import type { ModelEntry, ModelType } from '../catalog/catalog-schema'
import { requireModelType, resolveModel } from '../catalog/resolve-model'
import { GatewayError } from '../errors/gateway-error'
import { ModelNotSupportedError, UpstreamError } from '../errors/kinds'
import type { UpstreamTarget } from '../providers/adapter'
import type { Services } from '../services'
import { BilledCall } from './billed-call'
import { firstAnswer, type UpstreamAnswer } from './failover'
import { planRoutes, type Route } from './route-plan'

/** What an upstream answer cost, what to record of it, and the client's reply once settled. */
export interface PricedAnswer {
  /** The charge; throws UntrustedUsageError when the upstream's counts behind it cannot be trusted. */
  cost: () => bigint
  usage: Record<string, unknown>
  respond(cost: number): Response
}

/** An endpoint of the OpenAI surface other than chat (embeddings, images, audio), billed by what it returns. */
export interface EndpointCall<R extends Route> {
  modelId: string
  type: ModelType
  /** The gateway's path, for messages: `/v1/embeddings`. */
  endpoint: string
  /** The route shaped for this endpoint, or undefined when its API cannot serve it. */
  usable(route: Route): R | undefined
  send(route: R, target: UpstreamTarget): Promise<Response>
  /** The worst case, in micro-credits, reserved before the call. */
  hold(model: ModelEntry): bigint
  /** Prices the answer; throwing means the upstream answered with something unusable. */
  price(model: ModelEntry, response: Response, route: R): Promise<PricedAnswer>
}

/** The usual case: the route's API is OpenAI's, the body goes to `path` as it is. */
export function openAiPassthrough(path: string, body: (upstreamModel: string) => BodyInit) {
  return {
    usable: (route: Route) => {
      const send = route.adapter.sendOpenAiRequest
      return send ? { ...route, send } : undefined
    },
    send: (route: Route & { send: NonNullable<Route['adapter']['sendOpenAiRequest']> }, target: UpstreamTarget) => route.send(target, path, body(route.upstreamModel)),
  }
}

/**
 * The billed call every non-chat endpoint shares: a catalogue model of the right type (aliases
 * and custom models are chat-only), a hold, the routes in order with failover, then the
 * endpoint's own pricing of what came back.
 */
export async function billedEndpoint<R extends Route>(services: Services, caller: Caller, call: EndpointCall<R>, requestId: string, clientSignal: AbortSignal): Promise<Response> {
  const resolved = await resolveModel(services, caller, call.modelId)
  if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${call.modelId}' is served by /v1/chat/completions only.`, { param: 'model' })
  requireModelType(resolved, call.type, call.endpoint)
  const { model } = resolved
  const options = planRoutes(services, resolved, call.usable)
  const billed = await BilledCall.open(services, caller, call.hold(model), requestId, model.id, options[0]!.provider.name)
  let answer: UpstreamAnswer<R>
  let priced: PricedAnswer
  try {
    answer = await firstAnswer(
      options,
      (option, signal) => call.send(option, { provider: option.provider, model: option.upstreamModel, signal }),
      (option, status, text) => option.adapter.mapError(status, text),
      clientSignal,
    )
    priced = await call.price(model, answer.response, answer.option)
  } catch (error) {
    await billed.release()
    if (error instanceof GatewayError) throw error
    throw new UpstreamError('The upstream answered with something the gateway could not read.', { cause: error })
  }
  const settled = await billed.settleCost(model, answer.option.provider.name, priced.cost, priced.usage)
  return priced.respond(settled.cost)
}
