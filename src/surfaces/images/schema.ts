import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'
import { JsonInteger } from '../../http/schemas'

/** The most images one request may ask for: OpenAI's own limit, and so the bound of the hold. */
export const MAX_IMAGES = 10

/** POST /v1/images/generations: OpenAI's request shape; unknown fields pass through. */
export const ImagesSchema = t.Object(
  {
    model: t.String({ minLength: 1 }),
    prompt: t.String({ minLength: 1 }),
    n: t.Optional(JsonInteger({ minimum: 1, maximum: MAX_IMAGES })),
    size: t.Optional(t.String()),
    quality: t.Optional(t.String()),
    response_format: t.Optional(t.Union([t.Literal('url'), t.Literal('b64_json')])),
  },
  { additionalProperties: true },
)

export type ImagesBody = Static<typeof ImagesSchema>
