import type { ImageInput, VideoOutcome, VideoRequest } from '../../canonical/video'
import { InvalidRequestError, UpstreamError } from '../../errors/kinds'
import { sleep } from '../../util/sleep'
import { decodeWire, readWireJson } from '../../wire/decode'
import type { Fetch, UpstreamTarget } from '../adapter'
import { mapGeminiError } from '../gemini/map-error'
import type { ProviderConfig } from '../provider-config'
import { vertexAccessToken } from './access-token'
import { type FetchPredictOperationRequest, Operation, type PredictLongRunningRequest, StartedOperation, type VeoImage } from './api'

/**
 * An image as Veo takes it. A gs:// object is read by Vertex with the operator's credentials, so
 * a client may name only objects under the provider's `gcsUriPrefixes`: without the setting, no
 * gs:// URI at all (any bucket the operator's service account can read would otherwise leak).
 */
function imageField(image: ImageInput, provider: ProviderConfig, param: string): VeoImage {
  if (image.kind === 'inline') return { bytesBase64Encoded: image.data, mimeType: image.mimeType }
  const allowed = provider.gcsUriPrefixes ?? []
  if (!allowed.some((prefix) => image.uri.startsWith(prefix)) || image.uri.includes('/../')) {
    throw new InvalidRequestError(
      `${param}: this gs:// URI is not under the provider's gcsUriPrefixes setting; send the image inline or ask the operator which buckets are allowed.`,
      { param },
    )
  }
  return { gcsUri: image.uri, mimeType: image.mimeType ?? 'image/png' }
}

/**
 * Veo on Vertex AI (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation):
 * `:predictLongRunning` starts the job, `:fetchPredictOperation` is polled until `done`; the
 * clip comes inline or as a gs:// URI. Veo reports no duration. A result whose videos were
 * filtered by responsible-AI checks is a safety block. The API offers no way to cancel such an
 * operation, so this adapter's video group has no `cancel`: a submitted job runs to its end.
 */
export async function generateVeoVideo(fetch: Fetch, target: UpstreamTarget, request: VideoRequest, onStarted: (jobId: string) => void): Promise<VideoOutcome> {
  const { provider } = target
  const model = `${provider.baseUrl}/v1/projects/${provider.project}/locations/${provider.location}/publishers/google/models/${target.model}`
  const token = await vertexAccessToken(fetch, provider, target.signal)
  const headers = { ...target.headers, 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }
  const post = async (method: string, body: PredictLongRunningRequest | FetchPredictOperationRequest): Promise<unknown> => {
    const response = await fetch(`${model}:${method}`, { method: 'POST', headers, body: JSON.stringify(body), signal: target.signal })
    if (!response.ok) throw mapGeminiError(response.status, await response.text())
    return readWireJson(response, 'Veo operation')
  }

  const submitted = await post('predictLongRunning', {
    instances: [
      {
        prompt: request.prompt,
        ...(request.image ? { image: imageField(request.image, provider, 'image') } : {}),
        ...(request.lastFrame ? { lastFrame: imageField(request.lastFrame, provider, 'last_frame') } : {}),
      },
    ],
    parameters: {
      sampleCount: 1,
      durationSeconds: request.durationSeconds,
      ...(request.aspectRatio ? { aspectRatio: request.aspectRatio } : {}),
      ...(request.resolution ? { resolution: request.resolution } : {}),
      ...(request.resizeMode ? { resizeMode: request.resizeMode } : {}),
    },
  })
  // Without a name the job cannot be polled (nor named to whoever may want it stopped).
  const { name } = decodeWire(StartedOperation, submitted, 'Veo operation')
  onStarted(name)
  let operation: Operation = decodeWire(Operation, submitted, 'Veo operation')
  while (!operation.done) {
    await sleep(provider.pollIntervalMs, target.signal)
    operation = decodeWire(Operation, await post('fetchPredictOperation', { operationName: name }), 'Veo operation')
  }
  if (operation.error) throw new UpstreamError('The video generation failed upstream.', { cause: operation.error })
  const video = operation.response?.videos?.[0]
  if (!video) {
    const reasons = operation.response?.raiMediaFilteredReasons?.join(' ') ?? 'filtered by safety checks'
    return { kind: 'blocked', reason: reasons }
  }
  return 'bytesBase64Encoded' in video
    ? { kind: 'video', data: video.bytesBase64Encoded, mimeType: video.mimeType ?? 'video/mp4' }
    : { kind: 'video', url: video.gcsUri, mimeType: video.mimeType ?? 'video/mp4' }
}
