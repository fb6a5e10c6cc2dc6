import { chargePerSecond } from '../../billing/pricing'
import type { VideoOutcome } from '../../canonical/video'
import type { ModelEntry } from '../../catalog/catalog-schema'
import type { PricedAnswer, Surface, VideoRoute } from '../../dispatch/surface'
import { ContentPolicyError } from '../../errors/kinds'
import { scrubCredentials } from '../../util/scrub-credentials'
import { videoRoute } from '../routes'
import { resolveTypedModel } from '../typed-model'
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
    return {
      model: resolved,
      usable: videoRoute,
      call: (routes) => ({
        kind: 'video',
        modelId: model.id,
        routes,
        holdAmount: chargePerSecond(model.pricing.videoSecond, request.durationSeconds),
        job: request,
        price: (outcome) => priceVideo(model, outcome, request.durationSeconds),
      }),
    }
  },
}

/** The seconds the provider reports, else the requested (snapped) ones; a safety block is not billed. */
function priceVideo(model: ModelEntry, outcome: VideoOutcome, requestedSeconds: number): PricedAnswer {
  if (outcome.kind === 'blocked') {
    // Not billed (the dispatcher releases the hold); the reason is the upstream's text,
    // scrubbed like every upstream message a client reads.
    throw new ContentPolicyError(`The provider's safety filters withheld the video: ${scrubCredentials(outcome.reason)}`)
  }
  const seconds = outcome.durationSeconds ?? requestedSeconds
  return {
    cost: () => chargePerSecond(model.pricing.videoSecond, seconds),
    usage: { video_seconds: seconds, source: outcome.durationSeconds === undefined ? 'requested' : 'provider' },
    respond: (cost) =>
      Response.json({
        created: Math.floor(Date.now() / 1000),
        model: model.id,
        data: [{ ...(outcome.data ? { b64_json: outcome.data } : {}), ...(outcome.url ? { url: outcome.url } : {}), mime_type: outcome.mimeType }],
        ...(outcome.durationSeconds === undefined ? {} : { duration_seconds: outcome.durationSeconds }),
        usage: { video_seconds: seconds, cost },
      }),
  }
}
