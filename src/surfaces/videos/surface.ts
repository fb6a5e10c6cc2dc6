import { chargePerSecond } from '../../billing/pricing'
import type { VideoOutcome, VideoRequest } from '../../canonical/video'
import { planRoutes } from '../../dispatch/dispatcher'
import { resolveTypedModel } from '../../dispatch/priced'
import type { NonEmpty, Surface } from '../../dispatch/surface'
import { runVideoJob, type VideoRoute, videoRoute } from '../../dispatch/video-job'
import { GatewayError } from '../../errors/gateway-error'
import { ClientClosedError, ContentPolicyError, UpstreamError, UpstreamTimeoutError } from '../../errors/kinds'
import { scrubCredentials } from '../../util/scrub-credentials'
import { decodeVideoRequest } from './decode'
import type { VideoBody } from './schema'

/**
 * POST /v1/videos/generations, synchronous: check the duration against the model, hold the
 * requested seconds, let the route's adapter submit, poll and fetch the clip while the client
 * waits (video-job.ts bounds the job and decides what a client leaving means), then charge the
 * seconds the provider reports (or the requested, snapped ones). A failure, a safety block, a
 * job past its deadline or one cancelled for a client that left is not billed.
 */
export const videos: Surface<VideoBody, VideoRoute> = {
  async plan(services, { caller, body }) {
    const resolved = await resolveTypedModel(services, caller, body.model, 'video', '/v1/videos/generations')
    const { model } = resolved
    const request = decodeVideoRequest(body, model)
    const routes = planRoutes(services, resolved, videoRoute)
    return {
      modelId: model.id,
      routes,
      holdAmount: chargePerSecond(model.pricing.videoSecond, request.durationSeconds),
      async run(call, clientSignal) {
        const { route, outcome } = await firstVideo(routes, request, clientSignal)
        if (outcome.kind === 'blocked') {
          // Not billed (the dispatcher releases the hold); the reason is the upstream's text,
          // scrubbed like every upstream message a client reads.
          throw new ContentPolicyError(`The provider's safety filters withheld the video: ${scrubCredentials(outcome.reason)}`)
        }
        const seconds = outcome.durationSeconds ?? request.durationSeconds
        const settled = await call.settleCost(route, () => chargePerSecond(model.pricing.videoSecond, seconds), {
          video_seconds: seconds,
          source: outcome.durationSeconds === undefined ? 'requested' : 'provider',
        })
        return Response.json({
          created: Math.floor(Date.now() / 1000),
          model: model.id,
          data: [{ ...(outcome.data ? { b64_json: outcome.data } : {}), ...(outcome.url ? { url: outcome.url } : {}), mime_type: outcome.mimeType }],
          ...(outcome.durationSeconds === undefined ? {} : { duration_seconds: outcome.durationSeconds }),
          usage: { video_seconds: seconds, cost: settled.cost },
        })
      },
    }
  },
}

/**
 * Runs the job on each route in order until one finishes. A retryable GatewayError moves on to
 * the next route; a job past its deadline has had its time, and a client that left starts no
 * further job (nobody would pay for it): both end the search, as does any other failure.
 */
async function firstVideo(
  routes: NonEmpty<VideoRoute>,
  request: VideoRequest,
  clientSignal: AbortSignal,
): Promise<{ route: VideoRoute; outcome: VideoOutcome }> {
  let lastError: unknown
  for (const route of routes) {
    if (clientSignal.aborted) {
      lastError ??= new ClientClosedError('The client left before the video job started.')
      break
    }
    try {
      return { route, outcome: await runVideoJob(route, request, clientSignal) }
    } catch (error) {
      lastError = error
      if (clientSignal.aborted || !(error instanceof GatewayError) || !error.retryable || error instanceof UpstreamTimeoutError) break
    }
  }
  throw lastError instanceof GatewayError ? lastError : new UpstreamError('The video generation failed upstream.', { cause: lastError })
}
