import type { ImageInput, VideoRequest } from '../../canonical/video'
import type { ModelEntry } from '../../catalog/catalog-schema'
import { InvalidRequestError } from '../../errors/kinds'
import { checkImageHeader } from '../../media/image-header'
import type { VideoBody } from './schema'

/** The default clip length, when the model allows it. */
const DEFAULT_SECONDS = 8
/** Veo 3.x's clip lengths, 4, 6 or 8 seconds: family A models that list none of their own. */
export const FAMILY_A_DEFAULT_DURATIONS = [4, 6, 8]
const FAMILY_B_SIZES: Record<string, string> = { '16:9': '1280x720', '9:16': '720x1280' }

/**
 * The video request checked against the model and made canonical: family A (Veo) takes
 * aspect_ratio, resolution, resize_mode, image and last_frame and one of the model's clip
 * lengths; family B (Sora) takes size or aspect_ratio, a snapped duration and a reference
 * image. A parameter of the other family is a clear 400, not a silent drop. The duration is
 * checked here, before the hold: it sizes the hold, so an absurd one must never reach billing.
 */
export function decodeVideoRequest(body: VideoBody, model: Pick<ModelEntry, 'videoFamily' | 'videoDurations'>): VideoRequest {
  const imageValue = body.image ?? body.input_image ?? body.image_url
  const image = imageValue === undefined ? undefined : decodeImage(imageValue, 'image')
  if (model.videoFamily === 'B') {
    for (const param of ['resolution', 'resize_mode', 'last_frame'] as const) {
      if (body[param] !== undefined) throw new InvalidRequestError(`${param} is not supported by this video model.`, { param })
    }
    const size = body.size ?? (body.aspect_ratio ? FAMILY_B_SIZES[body.aspect_ratio] : undefined) ?? '1280x720'
    if (!Object.values(FAMILY_B_SIZES).includes(size))
      throw new InvalidRequestError('size must be 1280x720 or 720x1280 (or give aspect_ratio 16:9 or 9:16).', { param: body.size ? 'size' : 'aspect_ratio' })
    // Any positive length snaps (above 12 is 12), so no number can size a hold past 12 seconds.
    const requested = requestedSeconds(body, DEFAULT_SECONDS)
    // The gateway decodes family B's reference image to fit it to the output; one it would not
    // decode is refused here, before anything is held (resize-image.ts checks again).
    if (image?.kind === 'inline') checkImageHeader(Buffer.from(image.data, 'base64'), 'image')
    return { prompt: body.prompt, durationSeconds: snapFamilyB(requested.seconds), size, ...(image ? { image } : {}) }
  }
  if (body.size !== undefined) throw new InvalidRequestError('size is not supported by this video model; use aspect_ratio and resolution.', { param: 'size' })
  const allowed = model.videoDurations ?? FAMILY_A_DEFAULT_DURATIONS
  // Absent, the default length; a model without it gets its longest, which the hold covers.
  const requested = requestedSeconds(body, allowed.includes(DEFAULT_SECONDS) ? DEFAULT_SECONDS : Math.max(...allowed))
  if (!allowed.includes(requested.seconds)) {
    throw new InvalidRequestError(`${requested.param} must be one of ${allowed.join(', ')} for this model.`, { param: requested.param })
  }
  return {
    prompt: body.prompt,
    durationSeconds: requested.seconds,
    ...(body.aspect_ratio ? { aspectRatio: body.aspect_ratio } : {}),
    ...(body.resolution ? { resolution: body.resolution } : {}),
    ...(body.resize_mode ? { resizeMode: body.resize_mode.toLowerCase() } : {}),
    ...(image ? { image } : {}),
    ...(body.last_frame === undefined ? {} : { lastFrame: decodeImage(body.last_frame, 'last_frame') }),
  }
}

/** The requested length (`duration_seconds`, or its alias `seconds`) as a positive, finite number, with the field it came from. */
function requestedSeconds(body: VideoBody, fallback: number): { seconds: number; param: string } {
  const param = body.duration_seconds === undefined && body.seconds !== undefined ? 'seconds' : 'duration_seconds'
  const value = body.duration_seconds ?? body.seconds
  if (value === undefined) return { seconds: fallback, param }
  // Strings are the form multipart clients send; anything else that is not a plain decimal is refused.
  const seconds = typeof value === 'number' ? value : /^[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidRequestError(`${param} must be a positive number of seconds.`, { param })
  return { seconds, param }
}

/** 4, 8 or 12 seconds: the nearest, ties upward, below 4 is 4, above 12 is 12. */
export function snapFamilyB(seconds: number): number {
  if (seconds < 6) return 4
  if (seconds < 10) return 8
  return 12
}

/** Image types by object extension: a gs:// URI says no more about its object than its name. */
const GCS_IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp' }

function gcsImageType(uri: string, param: string): string {
  const extension = /\.([a-z0-9]+)$/i.exec(uri)?.[1]?.toLowerCase()
  const type = extension ? GCS_IMAGE_TYPES[extension] : undefined
  if (!type) throw new InvalidRequestError(`${param}: a gs:// image must name a .png, .jpg, .jpeg or .webp object.`, { param })
  return type
}

/** An object with `b64_json` (or `url`), a data URL, raw base64, or a gs:// URI. HTTP(S) URLs are refused. */
function decodeImage(value: unknown, param: string): ImageInput {
  if (value && typeof value === 'object') {
    const b64Json = 'b64_json' in value ? value.b64_json : undefined
    const mimeType = 'mime_type' in value ? value.mime_type : undefined
    const url = 'url' in value ? value.url : undefined
    if (typeof b64Json === 'string') return inline(b64Json, typeof mimeType === 'string' ? mimeType : undefined, param)
    if (typeof url === 'string') return decodeImage(url, param)
  }
  if (typeof value !== 'string' || value.length === 0)
    throw new InvalidRequestError(`${param} must be base64, a data URL, a gs:// URI or an object with b64_json.`, { param })
  if (/^https?:\/\//i.test(value)) throw new InvalidRequestError(`${param} cannot be an HTTP(S) URL: send the image inline or as a gs:// URI.`, { param })
  if (value.startsWith('gs://')) return { kind: 'gcs', uri: value, mimeType: gcsImageType(value, param) }
  const [, mimeType, data] = /^data:([^;,]+);base64,(.*)$/s.exec(value) ?? []
  return data === undefined ? inline(value, undefined, param) : inline(data, mimeType, param)
}

function inline(data: string, mimeType: string | undefined, param: string): ImageInput {
  const clean = data.replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(clean)) throw new InvalidRequestError(`${param} is not valid base64.`, { param })
  return { kind: 'inline', data: clean, mimeType: mimeType ?? sniffMimeType(clean) }
}

/** The image type from its first bytes, as base64 shows them. */
function sniffMimeType(base64: string): string {
  if (base64.startsWith('/9j/')) return 'image/jpeg'
  if (base64.startsWith('UklGR')) return 'image/webp'
  if (base64.startsWith('R0lGOD')) return 'image/gif'
  return 'image/png'
}
