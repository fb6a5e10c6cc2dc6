import type { Caller } from '../auth/authenticate'
import { estimateTextTokens, estimateValueTokens } from '../billing/estimator'
import { worstCaseForTokens } from '../billing/pricing'
import { requireModelType, resolveModel } from '../catalog/resolve-model'
import { InvalidRequestError, ModelNotSupportedError } from '../errors/kinds'
import type { UpstreamTarget } from '../providers/adapter'
import { decodeResponsesRequest } from '../routes/openai/decode-responses'
import { encodeResponse } from '../routes/openai/encode-responses'
import { ResponsesStreamEncoder } from '../routes/openai/encode-responses-stream'
import type { Services } from '../services'
import { BilledCall } from './billed-call'
import { relayResponsesStream } from './responses-stream'
import { planRoutes, translatedRoute, type Route, type TranslatedRoute } from './route-plan'
import { deliver, withCost } from './deliver'
import { maxOutputTokensOf, outputAllowanceOf, requireOutputTokens } from './output-tokens'

export type ResponsesBody = Record<string, unknown> & { model: string }

type ResponsesRoute = (Route & { mode: 'native'; send: (target: UpstreamTarget, body: Record<string, unknown>) => Promise<Response> }) | TranslatedRoute

/** Native where the provider serves the Responses API; otherwise by translation. */
function responsesRoute(route: Route): ResponsesRoute | undefined {
  const send = route.adapter.sendResponses
  return send && route.provider.responsesApi ? { ...route, mode: 'native', send } : translatedRoute(route)
}

/**
 * POST /v1/responses, billed like chat: the worst case (input estimate plus max_output_tokens
 * or the model's maximum) is held, the routes tried in order, the usage settled. Server-side
 * state (previous_response_id, store) exists only where the Responses API is served natively.
 */
export async function createResponse(services: Services, caller: Caller, request: ResponsesBody, requestId: string, clientSignal: AbortSignal): Promise<Response> {
  const resolved = await resolveModel(services, caller, request.model)
  if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${request.model}' is served by /v1/chat/completions only.`, { param: 'model' })
  requireModelType(resolved, 'chat', '/v1/responses')
  const { model } = resolved
  const stateful = request.previous_response_id !== undefined && request.previous_response_id !== null ? 'previous_response_id' : request.store === true ? 'store' : undefined
  const options = planRoutes(services, resolved, responsesRoute).filter((option) => !stateful || option.mode === 'native')
  if (options.length === 0) {
    throw new InvalidRequestError(`${stateful} is not supported for this model: it is served without OpenAI's Responses API. Send the whole conversation and store: false.`, { param: stateful })
  }
  const prompt = options.some((option) => option.mode === 'translated') ? decodeResponsesRequest(request) : undefined
  const inputTokens = estimateValueTokens(request.input) + (typeof request.instructions === 'string' ? estimateTextTokens(request.instructions) : 0) + estimateValueTokens(request.tools)
  const requested = request.max_output_tokens === undefined ? undefined : requireOutputTokens(request.max_output_tokens, 'max_output_tokens', maxOutputTokensOf(model), request.model)
  const call = await BilledCall.open(services, caller, worstCaseForTokens(model.pricing, inputTokens, outputAllowanceOf(model, requested)), requestId, model.id, options[0]!.provider.name)
  // Omitted, max_output_tokens is the model's maximum: translated APIs are told it, as on chat.
  const translatedPrompt = prompt && { ...prompt, maxOutputTokens: requested ?? model.maxOutputTokens }

  const answer = await call.reach(options, (option, target) => (option.mode === 'native' ? option.send(target, request) : option.send(target, translatedPrompt!)), clientSignal)
  return deliver(call, answer, inputTokens, {
    streaming: request.stream === true,
    relayNative: relayResponsesStream,
    nativeUsage: (response) => answer.option.adapter.responsesUsage?.(response.usage),
    presentNative: (response, cost) => ({ ...response, model: model.id, usage: withCost(response.usage, cost) }),
    streamEncoder: () => new ResponsesStreamEncoder(model.id),
    encodeAnswer: (translated, cost) => encodeResponse(translated, model.id, cost),
  })
}
