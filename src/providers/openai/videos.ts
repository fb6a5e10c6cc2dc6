import type { VideoOutcome, VideoRequest } from '../../canonical/video'
import { InvalidRequestError, UpstreamError } from '../../errors/kinds'
import { coverImage } from '../../media/resize-image'
import { sleep } from '../../util/sleep'
import { decodeWire, readWireJson } from '../../wire/decode'
import type { Fetch, UpstreamTarget } from '../adapter'
import { VideoResource } from './api'
import { mapOpenAiError } from './map-error'

/** Failure codes that mean the clip was withheld by moderation, not that generation broke. */
const MODERATION_CODES = new Set(['moderation_blocked', 'content_policy_violation', 'safety_violation'])

/**
 * OpenAI's videos API (https://platform.openai.com/docs/api-reference/videos): POST /videos (multipart, `seconds` as text, a reference
 * image scaled and cropped to the output size), poll
 * GET /videos/{id} until it completes or fails, then GET /videos/{id}/content for the MP4.
 */
export async function generateOpenAiVideo(
  fetch: Fetch,
  target: UpstreamTarget,
  request: VideoRequest,
  onStarted: (jobId: string) => void,
): Promise<VideoOutcome> {
  const base = target.provider.baseUrl
  const auth: Record<string, string> = { ...target.headers, ...(target.provider.credential ? { authorization: `Bearer ${target.provider.credential}` } : {}) }
  const form = new FormData()
  form.append('model', target.model)
  form.append('prompt', request.prompt)
  form.append('seconds', String(request.durationSeconds))
  form.append('size', request.size ?? '1280x720')
  if (request.image?.kind === 'gcs')
    throw new InvalidRequestError('This video model takes the image inline (base64 or a data URL), not a gs:// URI.', { param: 'image' })
  if (request.image) {
    // The reference image must match the output size exactly.
    const size = request.size ?? '1280x720'
    const [width, height] = size.split('x').map(Number) as [number, number]
    const fitted = await coverImage(Buffer.from(request.image.data, 'base64'), width, height, 'image')
    form.append('input_reference', new File([fitted], 'reference.png', { type: 'image/png' }))
  }

  const created = await fetch(`${base}/videos`, { method: 'POST', headers: auth, body: form, signal: target.signal })
  if (!created.ok) throw mapOpenAiError(created.status, await created.text())
  let video = decodeWire(VideoResource, await readWireJson(created, 'video job'), 'video job')
  onStarted(video.id)
  while (video.status === 'queued' || video.status === 'in_progress') {
    await sleep(target.provider.pollIntervalMs, target.signal)
    const polled = await fetch(`${base}/videos/${video.id}`, { headers: auth, signal: target.signal })
    if (!polled.ok) throw mapOpenAiError(polled.status, await polled.text())
    video = decodeWire(VideoResource, await readWireJson(polled, 'video job'), 'video job')
  }
  if (video.status === 'failed') {
    const code = video.error?.code
    if (code && MODERATION_CODES.has(code)) return { kind: 'blocked', reason: video.error?.message ?? code }
    throw new UpstreamError('The video generation failed upstream.', { cause: video.error })
  }
  const content = await fetch(`${base}/videos/${video.id}/content`, { headers: { ...auth, accept: 'application/binary' }, signal: target.signal })
  if (!content.ok) throw mapOpenAiError(content.status, await content.text())
  const seconds = Number(video.seconds)
  return {
    kind: 'video',
    data: Buffer.from(await content.arrayBuffer()).toString('base64'),
    mimeType: content.headers.get('content-type')?.split(';')[0] ?? 'video/mp4',
    ...(Number.isFinite(seconds) && seconds > 0 ? { durationSeconds: seconds } : {}),
  }
}

/**
 * DELETE /videos/{id} (https://platform.openai.com/docs/api-reference/videos/delete; the API
 * has no other way to stop a job): the video and its job are removed. The SDK documents
 * it for completed or failed videos, so the API may refuse a job still running: that rejects,
 * and the caller must then treat the job as one that runs on.
 */
export async function cancelOpenAiVideo(fetch: Fetch, target: UpstreamTarget, jobId: string): Promise<void> {
  const base = target.provider.baseUrl
  const auth: Record<string, string> = { ...target.headers, ...(target.provider.credential ? { authorization: `Bearer ${target.provider.credential}` } : {}) }
  const response = await fetch(`${base}/videos/${encodeURIComponent(jobId)}`, { method: 'DELETE', headers: auth, signal: target.signal })
  if (!response.ok) throw mapOpenAiError(response.status, await response.text())
}
