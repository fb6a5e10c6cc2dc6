import { InvalidRequestError } from '../../errors/kinds'
import type { ImageInput, VideoRequest } from '../../spec/video'

/**
 * The video request of API.md §4.4 checked against the model's family and made canonical:
 * family A (Veo) takes aspect_ratio, resolution, resize_mode, image and last_frame; family B
 * (Sora) takes size or aspect_ratio, a snapped duration and a reference image. A parameter of
 * the other family is a clear 400, not a silent drop.
 */
export interface VideoBody {
  prompt: string
  duration_seconds?: number | string
  seconds?: number | string
  aspect_ratio?: string
  size?: string
  resolution?: string
  resize_mode?: string
  image?: unknown
  input_image?: unknown
  image_url?: unknown
  last_frame?: unknown
}

const DEFAULT_SECONDS = 8
const FAMILY_B_SIZES: Record<string, string> = { '16:9': '1280x720', '9:16': '720x1280' }

export function decodeVideoRequest(body: VideoBody, family: 'A' | 'B'): VideoRequest {
  const requested = Number(body.duration_seconds ?? body.seconds ?? DEFAULT_SECONDS)
  if (!Number.isFinite(requested) || requested <= 0) throw new InvalidRequestError('duration_seconds must be a positive number.', { param: 'duration_seconds' })
  const imageValue = body.image ?? body.input_image ?? body.image_url
  const image = imageValue === undefined ? undefined : decodeImage(imageValue, 'image')
  if (family === 'B') {
    for (const param of ['resolution', 'resize_mode', 'last_frame'] as const) {
      if (body[param] !== undefined) throw new InvalidRequestError(`${param} is not supported by this video model.`, { param })
    }
    const size = body.size ?? (body.aspect_ratio ? FAMILY_B_SIZES[body.aspect_ratio] : undefined) ?? '1280x720'
    if (!Object.values(FAMILY_B_SIZES).includes(size)) throw new InvalidRequestError('size must be 1280x720 or 720x1280 (or give aspect_ratio 16:9 or 9:16).', { param: body.size ? 'size' : 'aspect_ratio' })
    return { prompt: body.prompt, durationSeconds: snapFamilyB(requested), size, ...(image ? { image } : {}) }
  }
  if (body.size !== undefined) throw new InvalidRequestError('size is not supported by this video model; use aspect_ratio and resolution.', { param: 'size' })
  return {
    prompt: body.prompt,
    durationSeconds: requested,
    ...(body.aspect_ratio ? { aspectRatio: body.aspect_ratio } : {}),
    ...(body.resolution ? { resolution: body.resolution } : {}),
    ...(body.resize_mode ? { resizeMode: body.resize_mode.toLowerCase() } : {}),
    ...(image ? { image } : {}),
    ...(body.last_frame === undefined ? {} : { lastFrame: decodeImage(body.last_frame, 'last_frame') }),
  }
}

/** 4, 8 or 12 seconds: the nearest, ties upward, below 4 is 4, above 12 is 12 (CONTRACT.md §7). */
export function snapFamilyB(seconds: number): number {
  if (seconds < 6) return 4
  if (seconds < 10) return 8
  return 12
}

/** An object with `b64_json` (or `url`), a data URL, raw base64, or a gs:// URI. HTTP(S) URLs are refused. */
function decodeImage(value: unknown, param: string): ImageInput {
  if (value && typeof value === 'object') {
    const record = value as { b64_json?: unknown; url?: unknown; mime_type?: unknown }
    if (typeof record.b64_json === 'string') return inline(record.b64_json, typeof record.mime_type === 'string' ? record.mime_type : undefined, param)
    if (typeof record.url === 'string') return decodeImage(record.url, param)
  }
  if (typeof value !== 'string' || value.length === 0) throw new InvalidRequestError(`${param} must be base64, a data URL, a gs:// URI or an object with b64_json.`, { param })
  if (/^https?:\/\//i.test(value)) throw new InvalidRequestError(`${param} cannot be an HTTP(S) URL: send the image inline or as a gs:// URI.`, { param })
  if (value.startsWith('gs://')) return { kind: 'gcs', uri: value }
  const dataUrl = /^data:([^;,]+);base64,(.*)$/s.exec(value)
  return dataUrl ? inline(dataUrl[2]!, dataUrl[1], param) : inline(value, undefined, param)
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
