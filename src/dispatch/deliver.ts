import { GatewayError } from '../errors/gateway-error'
import { UpstreamError } from '../errors/kinds'
import { watchIdle } from '../http/idle-timeout'
import type { Answer } from '../spec/answer'
import type { Usage } from '../spec/usage'
import type { BilledCall, RelayParams } from './billed-call'
import type { UpstreamAnswer } from './failover'
import type { Route, TranslatedRoute } from './route-plan'
import { relayTranslatedStream, type SurfaceStreamEncoder } from './translated-stream'

/** How one surface hands back an answer, whether its route spoke the surface's format or not. */
export interface SurfaceDelivery {
  streaming: boolean
  /** Native routes: the stream relayed in its own format, observed for usage. */
  relayNative(params: RelayParams): Response
  /** Native routes: the usage of a whole answer, when it reports one. */
  nativeUsage(body: Record<string, unknown>): Usage | undefined
  /** Native routes: the gateway's own count when the answer reports no usage (default: the input estimate alone). */
  estimateNative?(body: Record<string, unknown>): Usage
  /** Native routes: the whole answer as the client gets it, with the cost. */
  presentNative(body: Record<string, unknown>, cost: number): unknown
  /** Translated routes: canonical parts written as the surface's events. */
  streamEncoder(): SurfaceStreamEncoder
  /** Translated routes: a canonical answer written as the surface's object. */
  encodeAnswer(answer: Answer, cost: number): unknown
}

/**
 * The last step every chat-like endpoint shares: relay or read the upstream's answer, settle
 * the call from its usage (the gateway's own count when a native answer reports none), and
 * answer the client in its surface's format.
 */
export async function deliver(
  call: BilledCall,
  answer: UpstreamAnswer<(Route & { mode: 'native' }) | TranslatedRoute>,
  inputTokens: number,
  surface: SurfaceDelivery,
): Promise<Response> {
  try {
    return await deliverAnswer(call, answer, inputTokens, surface)
  } catch (error) {
    // An answer the gateway could not read or present: not billed, and the hold goes back now
    // rather than with the sweep (a call that already closed keeps its closing).
    answer.abort()
    await call.release()
    throw error instanceof GatewayError ? error : new UpstreamError('The upstream answered with something the gateway could not read.', { cause: error })
  }
}

async function deliverAnswer(
  call: BilledCall,
  answer: UpstreamAnswer<(Route & { mode: 'native' }) | TranslatedRoute>,
  inputTokens: number,
  surface: SurfaceDelivery,
): Promise<Response> {
  const { option } = answer
  const common = { abortUpstream: answer.abort, call, model: option.model, route: option.provider.name, inputTokens }
  if (surface.streaming) {
    // Every relay reads the upstream through the idle watch: silence ends it, settled (unfinished-stream.ts).
    const body = watchIdle(answer.response.body ?? new ReadableStream(), option.provider.streamIdleTimeoutMs, answer.abort)
    return option.mode === 'translated'
      ? relayTranslatedStream({ ...common, parts: option.readStream(body), encoder: surface.streamEncoder() })
      : surface.relayNative({ ...common, upstream: new Response(body, answer.response), adapter: option.adapter })
  }
  // A whole answer is bounded by the same silence limit as a stream: headers alone prove nothing.
  const whole = watchIdle(answer.response.body ?? new ReadableStream(), option.provider.streamIdleTimeoutMs, answer.abort)
  const body = await call.readJson(new Response(whole, answer.response))
  if (option.mode === 'translated') {
    const translated = option.readAnswer(body)
    const settled = await call.settle(option.model, common.route, translated.usage, 'provider')
    return Response.json(surface.encodeAnswer(translated, settled.cost))
  }
  const usage = surface.nativeUsage(body)
  const estimate = (): Usage => surface.estimateNative?.(body) ?? { inputTokens, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, webSearchRequests: 0 }
  const settled = await call.settle(option.model, common.route, usage ?? estimate(), usage ? 'provider' : 'estimate')
  return Response.json(surface.presentNative(body, settled.cost))
}

/** A native answer's own usage object with the cost added. */
export function withCost(usage: unknown, cost: number): Record<string, unknown> {
  return { ...(typeof usage === 'object' && usage !== null ? usage : {}), cost }
}
