import { t } from 'elysia'
import { JsonInteger } from '../../http/schemas'
import { surfaceEndpoint } from '../endpoint'
import { EmbeddingsSchema } from './schema'
import { embeddingsSurface } from './surface'

/** The answer: OpenAI's embedding list; `embedding` is base64 text with `encoding_format: "base64"`. */
const EmbeddingsAnswerSchema = t.Object(
  {
    object: t.Literal('list'),
    model: t.String(),
    data: t.Array(
      t.Object(
        { object: t.Literal('embedding'), index: JsonInteger({}), embedding: t.Union([t.Array(t.Number()), t.String()]) },
        { additionalProperties: true },
      ),
    ),
    usage: t.Object(
      { prompt_tokens: JsonInteger({}), total_tokens: JsonInteger({}), cost: t.Number({ description: 'Credits charged' }) },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
)

export const embeddingsEndpoint = surfaceEndpoint({
  path: '/v1/embeddings',
  parse: 'json',
  schema: EmbeddingsSchema,
  surface: embeddingsSurface,
  response: { json: EmbeddingsAnswerSchema },
  detail: { tags: ['Embeddings'], summary: 'Create embeddings (OpenAI format), billed on input tokens' },
})
