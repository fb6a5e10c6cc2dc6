import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'

/** POST /v1/embeddings: OpenAI's request shape; unknown fields pass through to OpenAI-format routes. */
export const EmbeddingsSchema = t.Object(
  {
    model: t.String({ minLength: 1 }),
    input: t.Union([t.String(), t.Array(t.String(), { minItems: 1 }), t.Array(t.Integer(), { minItems: 1 }), t.Array(t.Array(t.Integer()), { minItems: 1 })]),
    encoding_format: t.Optional(t.Union([t.Literal('float'), t.Literal('base64')])),
    dimensions: t.Optional(t.Integer({ minimum: 1 })),
    user: t.Optional(t.String()),
  },
  { additionalProperties: true },
)

export type EmbeddingsBody = Static<typeof EmbeddingsSchema>
