import type { ResolvedModel } from '../catalog/resolve-model'
import type { RouteCooldowns } from '../catalog/route-cooldowns'
import { GatewayError } from '../errors/gateway-error'
import { NoRouteAvailableError, UpstreamError, UpstreamTimeoutError } from '../errors/kinds'
import type { RequestRecord } from '../observability/request-record'
import { adapterFor } from '../providers/registry'
import type { Services } from '../services/services'
import { readWithinSilence } from '../streaming/idle-timeout'
import { readJsonObjectBytes } from '../streaming/upstream-json'
import { BilledCall } from './billed-call'
import { withCost } from './cost-header'
import { deliverPriced } from './priced'
import { sessionIdOf } from './session-id'
import { observeTranslated, relayStream } from './stream-relay'
import { sseSource, upstreamBodyOf } from './stream-sources'
import type { ConversationEncoding, NonEmpty, Route, Surface, SurfaceRequest, UpstreamAnswer } from './surface'
import { deliverVideo } from './video-job'

/** What a billed request reaches: the model lookups (catalogue, custom models) and what billing needs. */
export type DispatchServices = Pick<Services, 'catalog' | 'customModels' | 'payers' | 'holds' | 'rateLimiter' | 'routeCooldowns'>

/**
 * Runs one billed request of any surface, the same way every time: the surface says what it
 * needs (the model, the routes it can use), the routes are found, the surface plans the call over
 * them (hold, how to reach each route, how to write its answer), the worst case is held, the
 * routes are tried in order with failover, and the answer is delivered, which settles the call
 * from what the upstream consumed. A call that fails anywhere after the hold releases it: no path
 * leaves money held.
 */
export async function dispatch<Body, R extends Route>(services: DispatchServices, surface: Surface<Body, R>, request: SurfaceRequest<Body>): Promise<Response> {
  // Known before the plan, so a refusal of the model still names the session it came from.
  request.record.sessionId = sessionIdOf(request.headers)
  const needs = await surface.plan(services, request)
  const plan = needs.call(planRoutes(services, needs.model, needs.usable))
  request.record.requestedModel = plan.modelId
  const call = await BilledCall.open(
    services,
    request.caller,
    plan.holdAmount,
    request.record,
    plan.modelId,
    plan.routes[0].provider.name,
    request.record.sessionId,
  )
  if (plan.kind === 'video') return releasedOnFailure(call, () => deliverVideo(call, plan, request.signal, services.routeCooldowns))
  let answer: UpstreamAnswer<R>
  try {
    answer = await firstAnswer(
      plan.routes,
      (route, signal, headers) =>
        plan.send(route, {
          provider: route.provider,
          model: route.upstreamModel,
          signal,
          headers,
          oneHourCacheWrites: route.model.pricing.cacheWrite1h !== undefined,
        }),
      request.signal,
      request.record,
      services.routeCooldowns,
    )
  } catch (error) {
    // No route answered: nothing was consumed, the hold goes back.
    await call.release()
    throw error
  }
  return releasedOnFailure(
    call,
    () => (plan.kind === 'conversation' ? deliverConversation(call, answer, plan.encoding(answer.route)) : deliverPriced(call, answer, plan.price)),
    answer.abort,
  )
}

/**
 * Every route that could serve the request, in the order to try them: a model's routes in
 * config order; an alias's targets in order, each with its routes. `usable` keeps a route
 * (shaped as the surface reaches it) when its provider is configured and its API can serve the
 * surface. None is 503 no_route_available. Routes cooling down are left out while another
 * remains (catalog/route-cooldowns.ts).
 */
function planRoutes<R extends Route>(
  services: Pick<DispatchServices, 'catalog' | 'routeCooldowns'>,
  resolved: ResolvedModel,
  usable: (route: Route) => R | undefined,
): NonEmpty<R> {
  const models =
    resolved.kind === 'model'
      ? [resolved.model]
      : resolved.kind === 'custom'
        ? [resolved.base]
        : resolved.alias.targets.flatMap((target) => services.catalog.model(target) ?? [])
  const routes = models.flatMap((model) =>
    model.routes.flatMap((route): R[] => {
      const provider = services.catalog.provider(route.provider)
      const usableRoute = provider?.configured ? usable({ model, provider, adapter: adapterFor(provider), upstreamModel: route.model }) : undefined
      return usableRoute === undefined ? [] : [usableRoute]
    }),
  )
  const [first, ...rest] = routes
  if (first === undefined) throw new NoRouteAvailableError('No configured upstream can serve this model on this endpoint.')
  return services.routeCooldowns.usable([first, ...rest])
}

/**
 * Delivers, or, when delivery throws, releases: an answer the gateway could not read or present
 * is not billed, the upstream is stopped, and the hold goes back now rather than with the sweep
 * (a call that already closed keeps its closing).
 */
async function releasedOnFailure(call: BilledCall, deliver: () => Promise<Response>, abortUpstream: () => void = () => undefined): Promise<Response> {
  try {
    return await deliver()
  } catch (error) {
    abortUpstream()
    await call.release()
    throw error instanceof GatewayError ? error : new UpstreamError('The upstream answered with something the gateway could not read.', { cause: error })
  }
}

/**
 * Tries each route in order until one answers with a success status: a connection error, a
 * timeout before the response headers, 408, 429, 5xx or 529 moves to the next route, and so do
 * 401 and 403, which mean the gateway's own provider key is wrong; any other 4xx is the
 * client's fault, ends the search and is returned as the error, in the upstream's words
 * (docs/configuration.md#routes-and-failover). Nothing is billed here. Each attempt's outcome
 * goes to the route cooldowns: what the upstream answered, a timeout or no connection (a call
 * the gateway refused or the client left says nothing of the route).
 */
async function firstAnswer<R extends Route>(
  routes: R[],
  send: (route: R, signal: AbortSignal, headers: Record<string, string>) => Promise<Response>,
  clientSignal: AbortSignal,
  record: RequestRecord,
  cooldowns: RouteCooldowns,
): Promise<UpstreamAnswer<R>> {
  // Made only when every route failed: an Error's stack trace costs a served call for nothing.
  let lastError: GatewayError | undefined
  for (const route of routes) {
    if (clientSignal.aborted) break
    // The attempt's trace span is named before the call, so the upstream request can carry it.
    const upstream = record.upstreamCall()
    const startedAt = record.now()
    const started = performance.now()
    let answered = false
    const attempt = (outcome: { status: number } | { reason: string }) =>
      record.attempt({
        provider: route.provider.name,
        startedAt,
        durationMs: performance.now() - started,
        ...outcome,
        ...(upstream.spanId ? { spanId: upstream.spanId } : {}),
      })
    const controller = new AbortController()
    const abort = aborterOf(controller)
    clientSignal.addEventListener('abort', abort, { once: true })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, route.provider.timeoutMs)
    try {
      const response = await send(route, controller.signal, upstream.headers)
      answered = true
      attempt({ status: response.status })
      cooldowns.answered(route, response.status, response.headers)
      if (response.ok) return { route, response, abort, clientSignal }
      const error = route.adapter.mapError(response.status, await response.text().catch(() => ''))
      if (!isRetryableStatus(response.status)) throw error
      lastError = error
    } catch (error) {
      if (!answered) {
        const reason = error instanceof GatewayError ? 'refused' : timedOut ? 'timeout' : clientSignal.aborted ? 'client_closed' : 'unreachable'
        attempt({ reason })
        if (reason === 'timeout' || reason === 'unreachable') cooldowns.failed(route, { kind: reason })
      }
      if (error instanceof GatewayError) throw error
      lastError = timedOut
        ? new UpstreamTimeoutError(`The upstream provider did not answer within ${route.provider.timeoutMs} ms.`)
        : new UpstreamError('The upstream provider could not be reached.', { cause: error })
    } finally {
      clearTimeout(timer)
    }
    clientSignal.removeEventListener('abort', abort)
  }
  throw lastError ?? new UpstreamError('No upstream answered.')
}

/**
 * Aborts one upstream call. Made outside firstAnswer: the client's signal and a stream's relay
 * keep it until the stream ends, and a closure made in that async function would keep every
 * variable of the request's flow (its body, its plan, its routes) alive with it.
 */
function aborterOf(controller: AbortController): () => void {
  return () => controller.abort()
}

function isRetryableStatus(status: number): boolean {
  return status === 401 || status === 403 || status === 408 || status === 429 || status >= 500
}

/**
 * Delivers a conversation answer, native or translated, streamed or whole: every read of the
 * upstream goes through the idle watch (silence ends it, settled), the call is settled from the
 * answer's usage (the gateway's own count when a native answer reports none), and the client is
 * answered in its surface's format.
 */
async function deliverConversation(call: BilledCall, answer: UpstreamAnswer<Route>, encoding: ConversationEncoding): Promise<Response> {
  const route = answer.route
  const servedBy = { model: route.model, provider: route.provider, outputTokenLimit: encoding.outputTokenLimit }
  const relayed = { call, servedBy, abortUpstream: answer.abort, clientSignal: answer.clientSignal }
  const idleMs = route.provider.streamIdleTimeoutMs
  // A stream is fed from the upstream body as it arrives, its silence watched by the source itself.
  if (encoding.streaming) {
    const source = sseSource(upstreamBodyOf(answer.response), idleMs, answer.abort)
    if (encoding.mode === 'native') return relayStream(source, encoding.observeNative(), relayed)
    return relayStream(source, observeTranslated(encoding.translate.readStream(), encoding.encodeStream(), encoding.inputTokens), relayed)
  }
  // A whole answer is bounded by the same silence limit as a stream: headers alone prove nothing.
  const whole = await readJsonObjectBytes(readWithinSilence(upstreamBodyOf(answer.response), idleMs, answer.abort))
  if (encoding.mode === 'translated') {
    const translated = encoding.translate.readAnswer(whole)
    const settled = await call.settle(servedBy, translated.usage, 'provider')
    return withCost(Response.json(encoding.encodeAnswer(translated, settled.cost)), settled.cost)
  }
  const usage = encoding.nativeUsage(whole)
  const settled = usage ? await call.settle(servedBy, usage, 'provider') : await call.settle(servedBy, encoding.estimateNative(whole), 'estimate')
  return withCost(Response.json(encoding.presentNative(whole, settled.cost)), settled.cost)
}
