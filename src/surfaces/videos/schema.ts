import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'

const Image = t.Union([t.String(), t.Object({}, { additionalProperties: true })])
const Seconds = t.Union([t.Number({ exclusiveMinimum: 0 }), t.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })])

/** POST /v1/videos/generations: both families' parameters; decode.ts checks them against the model. */
export const VideoSchema = t.Object(
  {
    model: t.String({ minLength: 1 }),
    prompt: t.String({ minLength: 1, maxLength: 32_000 }),
    duration_seconds: t.Optional(Seconds),
    seconds: t.Optional(Seconds),
    aspect_ratio: t.Optional(t.Union([t.Literal('16:9'), t.Literal('9:16')])),
    size: t.Optional(t.String()),
    resolution: t.Optional(t.String()),
    resize_mode: t.Optional(t.String()),
    image: t.Optional(Image),
    input_image: t.Optional(Image),
    image_url: t.Optional(Image),
    last_frame: t.Optional(Image),
  },
  { additionalProperties: false },
)

export type VideoBody = Static<typeof VideoSchema>
