import { InvalidRequestError, UpstreamError } from '../../errors/kinds'
import type { ProviderConfig } from '../../config'
import type { ImageInput, VideoOutcome, VideoRequest } from '../../spec/video'
import { sleep } from '../../util/sleep'
import type { UpstreamTarget } from '../adapter'
import { mapGeminiError } from '../gemini/map-error'
import { vertexAccessToken } from './access-token'

interface Operation {
  name?: string
  done?: boolean
  error?: { code?: number; message?: string }
  response?: {
    raiMediaFilteredCount?: number
    raiMediaFilteredReasons?: string[]
    videos?: { bytesBase64Encoded?: string; gcsUri?: string; mimeType?: string }[]
  }
}

/**
 * An image as Veo takes it. A gs:// object is read by Vertex with the operator's credentials, so
 * a client may name only objects under the provider's `gcsUriPrefixes`: without the setting, no
 * gs:// URI at all (any bucket the operator's service account can read would otherwise leak).
 */
function imageField(image: ImageInput, provider: ProviderConfig, param: string): Record<string, string> {
  if (image.kind === 'inline') return { bytesBase64Encoded: image.data, mimeType: image.mimeType }
  const allowed = provider.gcsUriPrefixes ?? []
  if (!allowed.some((prefix) => image.uri.startsWith(prefix)) || image.uri.includes('/../')) {
    throw new InvalidRequestError(`${param}: this gs:// URI is not under the provider's gcsUriPrefixes setting; send the image inline or ask the operator which buckets are allowed.`, { param })
  }
  return { gcsUri: image.uri, mimeType: image.mimeType ?? 'image/png' }
}

/**
 * Veo on Vertex AI (WIRE.md §6.2): `:predictLongRunning` starts the job, `:fetchPredictOperation`
 * is polled until `done`; the clip comes inline or as a gs:// URI. Veo reports no duration.
 * A result whose videos were filtered by responsible-AI checks is a safety block. The API
 * offers no way to cancel such an operation (WIRE.md §6.2 has none), so this adapter has no
 * cancelVideoJob: a submitted job runs to its end.
 */
export async function generateVeoVideo(target: UpstreamTarget, request: VideoRequest, onStarted: (jobId: string) => void): Promise<VideoOutcome> {
  const { provider } = target
  const model = `${provider.baseUrl.replace(/\/+$/, '')}/v1/projects/${provider.project}/locations/${provider.location}/publishers/google/models/${target.model}`
  const token = await vertexAccessToken(provider, target.signal)
  const headers = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }
  const post = async (method: string, body: unknown): Promise<Operation> => {
    const response = await fetch(`${model}:${method}`, { method: 'POST', headers, body: JSON.stringify(body), signal: target.signal })
    if (!response.ok) throw mapGeminiError(response.status, await response.text())
    return (await response.json()) as Operation
  }

  const started = await post('predictLongRunning', {
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
  if (started.name) onStarted(started.name)
  let operation = started
  while (!operation.done) {
    await sleep(provider.pollIntervalMs, target.signal)
    operation = await post('fetchPredictOperation', { operationName: started.name })
  }
  if (operation.error) throw new UpstreamError('The video generation failed upstream.', { cause: operation.error })
  const video = operation.response?.videos?.[0]
  if (!video) {
    const reasons = operation.response?.raiMediaFilteredReasons?.join(' ') ?? 'filtered by safety checks'
    return { kind: 'blocked', reason: reasons }
  }
  return video.bytesBase64Encoded
    ? { kind: 'video', data: video.bytesBase64Encoded, mimeType: video.mimeType ?? 'video/mp4' }
    : { kind: 'video', url: video.gcsUri, mimeType: video.mimeType ?? 'video/mp4' }
}
