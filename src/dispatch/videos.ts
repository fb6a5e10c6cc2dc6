import type { Caller } from '../auth/authenticate'
import { chargePerSecond } from '../billing/pricing'
import { requireModelType, resolveModel } from '../catalog/resolve-model'
import { GatewayError } from '../errors/gateway-error'
import { ClientClosedError, ContentPolicyError, ModelNotSupportedError, UpstreamError, UpstreamTimeoutError } from '../errors/kinds'
import { decodeVideoRequest, type VideoBody } from '../routes/openai/decode-video'
import type { Services } from '../services'
import type { VideoOutcome } from '../spec/video'
import { scrubCredentials } from '../util/scrub-credentials'
import { BilledCall } from './billed-call'
import { planRoutes } from './route-plan'
import { runVideoJob, type VideoRoute } from './video-job'

/**
 * POST /v1/videos/generations, synchronous (API.md §4.4): check the duration against the
 * model, hold the requested seconds, let the route's adapter submit, poll and fetch the clip
 * while the client waits (video-job.ts bounds the job and decides what a client leaving means),
 * then charge the seconds the provider reports (or the requested, snapped ones). A failure, a
 * safety block, a job past its deadline or one cancelled for a client that left is not billed.
 */
export async function generateVideo(services: Services, caller: Caller, modelId: string, body: VideoBody, requestId: string, clientSignal: AbortSignal): Promise<Response> {
  const resolved = await resolveModel(services, caller, modelId)
  if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${modelId}' is served by /v1/chat/completions only.`, { param: 'model' })
  requireModelType(resolved, 'video', '/v1/videos/generations')
  const { model } = resolved
  const request = decodeVideoRequest(body, model)
  const options = planRoutes(services, resolved, (route): VideoRoute | undefined => {
    const generate = route.adapter.generateVideo
    return generate ? { provider: route.provider, upstreamModel: route.upstreamModel, generate, cancel: route.adapter.cancelVideoJob } : undefined
  })
  const call = await BilledCall.open(services, caller, chargePerSecond(model.pricing.videoSecond, request.durationSeconds), requestId, model.id, options[0]!.provider.name)

  let outcome: VideoOutcome | undefined
  let route = options[0]!.provider.name
  let lastError: unknown
  for (const option of options) {
    // A client already gone starts no job: nobody would pay for it.
    if (clientSignal.aborted) {
      lastError ??= new ClientClosedError('The client left before the video job started.')
      break
    }
    try {
      outcome = await runVideoJob(option, request, clientSignal)
      route = option.provider.name
      break
    } catch (error) {
      lastError = error
      // A retryable failure may move to the next route; a job past its deadline has had its time.
      if (clientSignal.aborted || !(error instanceof GatewayError) || !error.retryable || error instanceof UpstreamTimeoutError) break
    }
  }
  if (!outcome) {
    await call.release()
    throw lastError instanceof GatewayError ? lastError : new UpstreamError('The video generation failed upstream.', { cause: lastError })
  }
  if (outcome.kind === 'blocked') {
    await call.release()
    // The reason is the upstream's text, scrubbed like every upstream message a client reads.
    throw new ContentPolicyError(`The provider's safety filters withheld the video: ${scrubCredentials(outcome.reason)}`)
  }
  const seconds = outcome.durationSeconds ?? request.durationSeconds
  const settled = await call.settleCost(model, route, () => chargePerSecond(model.pricing.videoSecond, seconds), {
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
}
