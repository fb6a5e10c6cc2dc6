import type { Caller } from '../auth/authenticate'
import { chargePerSecond } from '../billing/pricing'
import { requireModelType, resolveModel } from '../catalog/resolve-model'
import { GatewayError } from '../errors/gateway-error'
import { ContentPolicyError, ModelNotSupportedError, UpstreamError } from '../errors/kinds'
import { decodeVideoRequest, type VideoBody } from '../routes/openai/decode-video'
import type { Services } from '../services'
import type { VideoOutcome } from '../spec/video'
import { BilledCall } from './billed-call'
import { planRoutes } from './route-plan'

/**
 * POST /v1/videos/generations, synchronous (API.md §4.4): hold the requested seconds, let the
 * route's adapter submit, poll and fetch the clip while the client waits, then charge the
 * seconds the provider reports (or the requested, snapped ones). A failure, a safety block or
 * a client that goes away is not billed.
 */
export async function generateVideo(services: Services, caller: Caller, modelId: string, body: VideoBody, requestId: string, clientSignal: AbortSignal): Promise<Response> {
  const resolved = await resolveModel(services, caller, modelId)
  if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${modelId}' is served by /v1/chat/completions only.`, { param: 'model' })
  requireModelType(resolved, 'video', '/v1/videos/generations')
  const { model } = resolved
  const request = decodeVideoRequest(body, model.videoFamily ?? 'A')
  const options = planRoutes(services, resolved, (route) => {
    const generate = route.adapter.generateVideo
    return generate ? { ...route, generate } : undefined
  })
  const call = await BilledCall.open(services, caller, chargePerSecond(model.pricing.videoSecond, request.durationSeconds), requestId, model.id, options[0]!.provider.name)

  let outcome: VideoOutcome | undefined
  let route = options[0]!.provider.name
  let lastError: unknown
  for (const option of options) {
    try {
      outcome = await option.generate({ provider: option.provider, model: option.upstreamModel, signal: clientSignal }, request)
      route = option.provider.name
      break
    } catch (error) {
      lastError = error
      // A retryable failure before the job ran may move to the next route; anything else ends it.
      if (clientSignal.aborted || !(error instanceof GatewayError) || !error.retryable) break
    }
  }
  if (!outcome) {
    await call.release()
    throw lastError instanceof GatewayError ? lastError : new UpstreamError('The video generation failed upstream.', { cause: lastError })
  }
  if (outcome.kind === 'blocked') {
    await call.release()
    throw new ContentPolicyError(`The provider's safety filters withheld the video: ${outcome.reason}`)
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
