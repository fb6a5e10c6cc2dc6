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
import type { Prompt } from '../spec/prompt'
import { BilledCall } from './billed-call'
import { isMissingEndpoint, rememberWithoutResponsesApi, responsesApiMode } from './responses-api-memory'
import { relayResponsesStream } from './responses-stream'
import { planRoutes, translatedRoute, type Route, type TranslatedRoute } from './route-plan'
import { deliver, withCost } from './deliver'
import { maxOutputTokensOf, outputAllowanceOf, requireOutputTokens } from './output-tokens'

export type ResponsesBody = Record<string, unknown> & { model: string }

/** Server-side state lives with the Responses API: a translated route cannot keep it. */
function statefulUnsupported(field: 'previous_response_id' | 'store'): InvalidRequestError {
  return new InvalidRequestError(`${field} is not supported for this model: it is served without OpenAI's Responses API. Send the whole conversation and store: false.`, { param: field })
}

/**
 * A native route may carry `fallback`, the same route by translation: where the provider has
 * not said whether it serves the Responses API, a 404 or 405 there switches this call to it.
 */
type NativeResponsesRoute = Route & { mode: 'native'; send: (target: UpstreamTarget, body: Record<string, unknown>) => Promise<Response>; fallback?: TranslatedRoute }
type ResponsesRoute = NativeResponsesRoute | TranslatedRoute

/** Native where the API has a Responses endpoint and the provider has not refused it (responses-api-memory.ts); otherwise by translation. */
function responsesRoute(route: Route): ResponsesRoute | undefined {
  const send = route.adapter.sendResponses
  const translated = translatedRoute(route)
  if (!send) return translated
  const mode = responsesApiMode(route.provider)
  if (mode === 'translated') return translated
  return { ...route, mode: 'native', send, ...(mode === 'native-with-fallback' && translated ? { fallback: translated } : {}) }
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
  if (stateful && options.length === 0) throw statefulUnsupported(stateful)
  const inputTokens = estimateValueTokens(request.input) + (typeof request.instructions === 'string' ? estimateTextTokens(request.instructions) : 0) + estimateValueTokens(request.tools)
  const requested = request.max_output_tokens === undefined ? undefined : requireOutputTokens(request.max_output_tokens, 'max_output_tokens', maxOutputTokensOf(model), request.model)
  // One hold for the call, whichever way each route ends up reached.
  const call = await BilledCall.open(services, caller, worstCaseForTokens(model.pricing, inputTokens, outputAllowanceOf(model, requested)), requestId, model.id, options[0]!.provider.name)
  // Decoded when a route first needs it: native calls never do. Omitted, max_output_tokens is
  // the model's maximum, and translated APIs are told it, as on chat.
  let prompt: Prompt | undefined
  const translatedPrompt = () => (prompt ??= { ...decodeResponsesRequest(request), maxOutputTokens: requested ?? model.maxOutputTokens })
  // Native routes that switched to their translation during this call.
  const switched = new Map<ResponsesRoute, TranslatedRoute>()

  const reached = await call.reach(
    options,
    async (option, target) => {
      if (option.mode === 'translated') return option.send(target, translatedPrompt())
      const response = await option.send(target, request)
      if (!option.fallback || !isMissingEndpoint(response.status)) return response
      // No Responses API on this server: not a failure of the route, so no failover and no new
      // hold; this call and every later one reach the same route through chat completions.
      await response.body?.cancel().catch(() => undefined)
      rememberWithoutResponsesApi(option.provider)
      if (stateful) throw statefulUnsupported(stateful)
      switched.set(option, option.fallback)
      return option.fallback.send(target, translatedPrompt())
    },
    clientSignal,
  )
  const servedBy = switched.get(reached.option)
  const answer = servedBy ? { ...reached, option: servedBy } : reached
  return deliver(call, answer, inputTokens, {
    streaming: request.stream === true,
    relayNative: relayResponsesStream,
    nativeUsage: (response) => answer.option.adapter.responsesUsage?.(response.usage),
    presentNative: (response, cost) => ({ ...response, model: model.id, usage: withCost(response.usage, cost) }),
    streamEncoder: () => new ResponsesStreamEncoder(model.id),
    encodeAnswer: (translated, cost) => encodeResponse(translated, model.id, cost),
  })
}
