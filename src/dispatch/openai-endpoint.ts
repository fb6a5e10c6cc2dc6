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
  cost: bigint
  usage: Record<string, unknown>
  respond(cost: number): Response
}

/** One of OpenAI's own endpoints (embeddings, images, audio), billed by what it returns. */
export interface OpenAiEndpointCall {
  modelId: string
  type: ModelType
  /** The gateway's path, for messages: `/v1/embeddings`. */
  endpoint: string
  /** The upstream path below the `/v1` base: `/embeddings`. */
  path: string
  body(upstreamModel: string): BodyInit
  /** The worst case, in micro-credits, reserved before the call. */
  hold(model: ModelEntry): bigint
  /** Prices the answer; throwing means the upstream answered with something unusable. */
  price(model: ModelEntry, response: Response): Promise<PricedAnswer>
}

type EndpointRoute = Route & { send: (target: UpstreamTarget, path: string, body: BodyInit) => Promise<Response> }

/**
 * The billed call every OpenAI-format media endpoint shares: a catalogue model of the right
 * type (aliases and custom models are chat-only), a hold, the routes in order with failover,
 * then the endpoint's own pricing of what came back.
 */
export async function billedOpenAiEndpoint(services: Services, caller: Caller, call: OpenAiEndpointCall, requestId: string, clientSignal: AbortSignal): Promise<Response> {
  const resolved = await resolveModel(services, caller, call.modelId)
  if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${call.modelId}' is served by /v1/chat/completions only.`, { param: 'model' })
  requireModelType(resolved, call.type, call.endpoint)
  const { model } = resolved
  const options = planRoutes(services, resolved, (route): EndpointRoute | undefined => {
    const send = route.adapter.sendOpenAiRequest
    return send ? { ...route, send } : undefined
  })
  const billed = await BilledCall.open(services, caller, call.hold(model), requestId, model.id, options[0]!.provider.name)
  let answer: UpstreamAnswer<EndpointRoute>
  let priced: PricedAnswer
  try {
    answer = await firstAnswer(
      options,
      (option, signal) => option.send({ provider: option.provider, model: option.upstreamModel, signal }, call.path, call.body(option.upstreamModel)),
      (option, status, text) => option.adapter.mapError(status, text),
      clientSignal,
    )
    priced = await call.price(model, answer.response)
  } catch (error) {
    await billed.release()
    if (error instanceof GatewayError) throw error
    throw new UpstreamError('The upstream answered with something the gateway could not read.', { cause: error })
  }
  const settled = await billed.settleCost(model, answer.option.provider.name, priced.cost, priced.usage)
  return priced.respond(settled.cost)
}
