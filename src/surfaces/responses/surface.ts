import { boundedTextTokens, estimateValueTokens, scanBudget } from '../../billing/estimator'
import { worstCaseForTokens } from '../../billing/pricing'
import type { Prompt } from '../../canonical/prompt'
import { estimatedUsage } from '../../canonical/usage'
import type { ModelEntry } from '../../catalog/catalog-schema'
import { requireModelType, resolveModel } from '../../catalog/resolve-model'
import type { CallPlan, ConversationEncoding, NonEmpty, Route, Surface } from '../../dispatch/surface'
import { InvalidRequestError, ModelNotSupportedError } from '../../errors/kinds'
import type { ResponsesCapability } from '../../providers/adapter'
import { usageWithCost } from '../../streaming/upstream-json'
import { maxOutputTokensOf, outputAllowanceOf, requireOutputTokens } from '../output-tokens'
import { type NativeRoute, type TranslatedRoute, translatedEncoding, translatedRoute } from '../routes'
import { isMissingEndpoint, rememberWithoutResponsesApi, responsesApiMode } from './api-memory'
import { decodeResponsesRequest } from './decode'
import { encodeResponse } from './encode'
import { ResponsesStreamEncoder } from './encode-stream'
import { observeResponsesStream } from './observe-native'
import type { ResponsesBody } from './schema'

/**
 * A native route may carry `fallback`, the same route by translation: where the provider has
 * not said whether it serves the Responses API, a 404 or 405 there switches this call to it.
 */
type NativeResponsesRoute = NativeRoute<ResponsesCapability> & { fallback?: TranslatedRoute }
type ResponsesRoute = NativeResponsesRoute | TranslatedRoute

/** Server-side state lives with the Responses API: a translated route cannot keep it. */
function statefulUnsupported(field: 'previous_response_id' | 'store'): InvalidRequestError {
  return new InvalidRequestError(
    `${field} is not supported for this model: it is served without OpenAI's Responses API. Send the whole conversation and store: false.`,
    { param: field },
  )
}

/** Native where the API has a Responses endpoint and the provider has not refused it (api-memory.ts); otherwise by translation. */
function responsesRoute(route: Route): ResponsesRoute | undefined {
  const native = route.adapter.responses
  const translated = translatedRoute(route)
  if (!native) return translated
  const mode = responsesApiMode(route.provider)
  if (mode === 'translated') return translated
  return { ...route, mode: 'native', native, ...(mode === 'native-with-fallback' && translated ? { fallback: translated } : {}) }
}

/**
 * POST /v1/responses, billed like chat: the worst case (input estimate plus max_output_tokens
 * or the model's maximum) is held, the routes tried in order, the usage settled. Server-side
 * state (previous_response_id, store) exists only where the Responses API is served natively.
 */
export const responses: Surface<ResponsesBody, ResponsesRoute> = {
  async plan(services, { caller, body: request }) {
    const resolved = await resolveModel(services, caller, request.model)
    if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${request.model}' is served by /v1/chat/completions only.`, { param: 'model' })
    requireModelType(resolved, 'chat', '/v1/responses')
    const { model } = resolved
    return { model: resolved, usable: responsesRoute, call: (routes) => responsesCall(request, model, routes) }
  },
}

/** The call over the routes found: the hold, how each route is reached (switching to its translation when needed), how its answer is written. */
function responsesCall(request: ResponsesBody, model: ModelEntry, found: NonEmpty<ResponsesRoute>): CallPlan<ResponsesRoute> {
  const stateful =
    request.previous_response_id !== undefined && request.previous_response_id !== null ? 'previous_response_id' : request.store === true ? 'store' : undefined
  const routes = statefulRoutes(found, stateful)
  const budget = scanBudget()
  const inputTokens =
    estimateValueTokens(request.input, budget) +
    (typeof request.instructions === 'string' ? boundedTextTokens(request.instructions, budget) : 0) +
    estimateValueTokens(request.tools, budget)
  const requested =
    request.max_output_tokens === undefined
      ? undefined
      : requireOutputTokens(request.max_output_tokens, 'max_output_tokens', maxOutputTokensOf(model), request.model)
  // Omitted, max_output_tokens is the model's maximum, and every route is told it, as on chat.
  const outputTokens = outputAllowanceOf(model, requested)
  const nativeBody = request.max_output_tokens === undefined ? { ...request, max_output_tokens: outputTokens } : request
  // Decoded when a route first needs it: native calls never do.
  let prompt: Prompt | undefined
  const translatedPrompt = () => (prompt ??= { ...decodeResponsesRequest(request), maxOutputTokens: outputTokens })
  // Native routes that switched to their translation during this call.
  const switched = new Map<ResponsesRoute, TranslatedRoute>()
  return {
    kind: 'conversation',
    modelId: model.id,
    routes,
    // One hold for the call, whichever way each route ends up reached.
    holdAmount: worstCaseForTokens(model.pricing, inputTokens, outputTokens),
    outputCap: { param: 'max_output_tokens', tokens: outputTokens, given: requested !== undefined },
    async send(route, target) {
      if (route.mode === 'translated') return route.translate.send(target, translatedPrompt())
      const response = await route.native.send(target, nativeBody)
      if (!route.fallback || !isMissingEndpoint(response.status)) return response
      // No Responses API on this server: not a failure of the route, so no failover and no new
      // hold; this call and every later one reach the same route through chat completions.
      await response.body?.cancel().catch(() => undefined)
      rememberWithoutResponsesApi(route.provider)
      if (stateful) throw statefulUnsupported(stateful)
      switched.set(route, route.fallback)
      return route.fallback.translate.send(target, translatedPrompt())
    },
    // The answer is read the way its route was finally reached.
    encoding: (route) => responsesEncoding(switched.get(route) ?? route, model.id, inputTokens, outputTokens, request.stream === true),
  }
}

/** Only native routes keep server-side state; a stateful request no native route can serve is refused. */
function statefulRoutes(routes: NonEmpty<ResponsesRoute>, stateful: 'previous_response_id' | 'store' | undefined): NonEmpty<ResponsesRoute> {
  if (!stateful) return routes
  const [first, ...rest] = routes.filter((route) => route.mode === 'native')
  if (first === undefined) throw statefulUnsupported(stateful)
  return [first, ...rest]
}

function responsesEncoding(route: ResponsesRoute, shownModel: string, inputTokens: number, outputTokenLimit: number, streaming: boolean): ConversationEncoding {
  const shape = { streaming, inputTokens, outputTokenLimit }
  if (route.mode === 'translated') {
    return translatedEncoding(route, shape, {
      encodeAnswer: (answer, cost) => encodeResponse(answer, shownModel, cost),
      encodeStream: () => new ResponsesStreamEncoder(shownModel),
    })
  }
  const usageOf = route.native.usage
  return {
    ...shape,
    mode: 'native',
    nativeUsage: (response) => usageOf(response.usage),
    estimateNative: () => estimatedUsage(inputTokens, 0),
    presentNative: (response, cost) => ({ ...response, model: shownModel, usage: usageWithCost(response.usage, cost) }),
    observeNative: () => observeResponsesStream({ shownModel, inputTokens, usageOf }),
  }
}
