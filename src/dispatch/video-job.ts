import type { VideoOutcome, VideoRequest } from '../canonical/video'
import type { RouteCooldowns, RouteFailure } from '../catalog/route-cooldowns'
import { GatewayError } from '../errors/gateway-error'
import { ClientClosedError, UpstreamError, UpstreamTimeoutError } from '../errors/kinds'
import type { UpstreamTarget } from '../providers/adapter'
import type { BilledCall } from './billed-call'
import { settlePriced } from './priced'
import type { NonEmpty, VideoCall, VideoRoute } from './surface'

/**
 * Delivers a video call: the job runs on each route in turn (firstVideo), the surface prices the
 * one that finished, and the call is settled for it. A failure, a safety block (the surface's
 * price throws), a job past its deadline or one cancelled for a client that left is not billed:
 * the dispatcher releases the hold.
 */
export async function deliverVideo(call: BilledCall, plan: VideoCall, clientSignal: AbortSignal, cooldowns: RouteCooldowns): Promise<Response> {
  const { route, outcome } = await firstVideo(plan.routes, plan.job, clientSignal, cooldowns)
  return settlePriced(call, route, plan.price(outcome, route))
}

/**
 * Runs the job on each route in order until one finishes. A retryable GatewayError moves on to
 * the next route; a job past its deadline has had its time, and a client that left starts no
 * further job (nobody would pay for it): both end the search, as does any other failure. A job
 * that finished (a blocked one too) clears its route's failures; one the upstream failed, could
 * not be reached for, or that passed its deadline counts against it (catalog/route-cooldowns.ts).
 */
async function firstVideo(
  routes: NonEmpty<VideoRoute>,
  request: VideoRequest,
  clientSignal: AbortSignal,
  cooldowns: RouteCooldowns,
): Promise<{ route: VideoRoute; outcome: VideoOutcome }> {
  let lastError: unknown
  for (const route of routes) {
    if (clientSignal.aborted) {
      lastError ??= new ClientClosedError('The client left before the video job started.')
      break
    }
    try {
      const outcome = await runVideoJob(route, request, clientSignal)
      cooldowns.succeeded(route)
      return { route, outcome }
    } catch (error) {
      lastError = error
      const failure = clientSignal.aborted ? undefined : videoRouteFailure(error)
      if (failure) cooldowns.failed(route, failure)
      if (clientSignal.aborted || !(error instanceof GatewayError) || !error.retryable || error instanceof UpstreamTimeoutError) break
    }
  }
  throw lastError instanceof GatewayError ? lastError : new UpstreamError('The video generation failed upstream.', { cause: lastError })
}

/**
 * What a failed job says of its route: an upstream failure (its status when it answered one, a
 * failed job otherwise), the job's deadline, or no connection (an error that is not the
 * gateway's). The client's fault and the gateway's refusals say nothing, nor do 401 and 403
 * (the gateway's provider key).
 */
function videoRouteFailure(error: unknown): RouteFailure | undefined {
  if (error instanceof UpstreamTimeoutError) return { kind: 'timeout' }
  if (!(error instanceof GatewayError)) return { kind: 'unreachable' }
  if (!(error instanceof UpstreamError)) return undefined
  const status = error.upstreamStatus
  if (status === 401 || status === 403) return undefined
  return status === 408 ? { kind: 'timeout' } : { kind: 'status', status: status ?? 502 }
}

/**
 * Runs one video job on one route and decides what happens to it when nobody should wait any
 * longer. The job never outlives the provider's `jobTimeoutMs`: then the wait stops, the job
 * is cancelled upstream where the API allows, and the call fails with 504 (not billed).
 *
 * A client that leaves does not by itself stop the job, because a submitted job costs the
 * operator whether anyone waits or not. Where the API can cancel it, the job is cancelled
 * and, once the API confirms, the wait stops with ClientClosedError (the caller releases the
 * hold). Where it cannot, or the API refuses, the job is followed to its end as if the client
 * were there, and its outcome is returned for billing, like an abandoned stream that is billed
 * for what was generated.
 */
async function runVideoJob(route: VideoRoute, request: VideoRequest, clientSignal: AbortSignal): Promise<VideoOutcome> {
  const { provider } = route
  const { video } = route
  const stopWaiting = new AbortController()
  let deadlinePassed = false
  let cancelledForClient = false
  const deadline = setTimeout(() => {
    deadlinePassed = true
    stopWaiting.abort()
  }, provider.jobTimeoutMs)
  // Video jobs are not traced as attempts (they poll for minutes): nothing extra is sent.
  const target: UpstreamTarget = { provider, model: route.upstreamModel, signal: stopWaiting.signal, headers: {} }

  let jobId: string | undefined
  let announce: () => void = () => {}
  // Settles once the job has an id, or once the attempt ended without one.
  const submitted = new Promise<void>((resolve) => (announce = resolve))
  const running = video.generate(target, request, (id) => {
    jobId = id
    announce()
  })
  running.then(announce, announce)

  /** Asks the API to cancel the job; false when there is no job yet, no way to, or the API refused. */
  const cancelJob = async (): Promise<boolean> => {
    if (jobId === undefined || !video.cancel) return false
    // The waiting signal may be aborted already: the cancel request has its own bound.
    const bound = new AbortController()
    const timer = setTimeout(() => bound.abort(), provider.timeoutMs)
    try {
      await video.cancel({ ...target, signal: bound.signal }, jobId)
      return true
    } catch {
      return false
    } finally {
      clearTimeout(timer)
    }
  }
  const onClientGone = async () => {
    if (!video.cancel) return
    // A submit in flight is let finish: aborting it could leave a job upstream with no id to cancel.
    await submitted
    if (await cancelJob()) {
      cancelledForClient = true
      stopWaiting.abort()
    }
  }
  clientSignal.addEventListener('abort', onClientGone, { once: true })

  try {
    return await running
  } catch (error) {
    if (deadlinePassed) {
      // The client gets its 504 now; the cancel runs on its own and may fail quietly.
      void cancelJob()
      throw new UpstreamTimeoutError(`The video generation did not finish within ${provider.jobTimeoutMs} ms.`, { cause: error })
    }
    if (cancelledForClient) throw new ClientClosedError('The client left; the video job was cancelled upstream.', { cause: error })
    throw error
  } finally {
    clearTimeout(deadline)
    clientSignal.removeEventListener('abort', onClientGone)
  }
}
