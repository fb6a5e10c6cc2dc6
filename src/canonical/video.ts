/**
 * A provider-neutral video generation request and its outcome (docs/api.md#videos). Each video API's
 * adapter turns it into its own job, polls the job inside the gateway, and returns the clip.
 */

/** An image given inline (base64) or by a Cloud Storage URI. */
export type ImageInput = { kind: 'inline'; data: string; mimeType: string } | { kind: 'gcs'; uri: string; mimeType?: string }

export interface VideoRequest {
  prompt: string
  /** Already snapped for APIs that take fixed lengths. */
  durationSeconds: number
  aspectRatio?: string
  /** Family B: `1280x720` or `720x1280`. */
  size?: string
  /** Family A: `720p`, `1080p`. */
  resolution?: string
  /** Family A image-to-video: `pad` or `crop`. */
  resizeMode?: string
  /** First frame (family A) or reference image (family B). */
  image?: ImageInput
  /** Family A: the last frame. */
  lastFrame?: ImageInput
}

export type VideoOutcome =
  | {
      kind: 'video'
      /** Base64 of the clip, when the provider returned bytes. */
      data?: string
      url?: string
      mimeType: string
      /** Only when the provider reports it. */
      durationSeconds?: number
    }
  /** Safety filters withheld the clip: not billed. */
  | { kind: 'blocked'; reason: string }
