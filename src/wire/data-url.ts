import type { ImagePart } from '../canonical/prompt'

/**
 * A picture as the OpenAI formats carry it (chat's `image_url`, Responses' `input_image`): a
 * URL, or the inline picture as a data URL. Both ways, for both formats.
 */

export function imageUrlOf(part: ImagePart): string {
  return part.url ?? `data:${part.mediaType ?? 'image/png'};base64,${part.data ?? ''}`
}

/** A data URL becomes an inline picture; anything else stays a URL. */
export function imagePartOf(url: string): ImagePart {
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  return inline ? { type: 'image', mediaType: inline[1], data: inline[2] } : { type: 'image', url }
}
