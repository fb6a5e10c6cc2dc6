import { t } from 'elysia'
import { JsonInteger } from '../../http/schemas'
import { surfaceEndpoint } from '../endpoint'
import { ImagesSchema } from './schema'
import { imagesSurface } from './surface'

/** The answer: OpenAI's image list, each image as `b64_json` or `url`. */
const ImagesAnswerSchema = t.Object(
  {
    created: JsonInteger({}),
    data: t.Array(
      t.Object({ b64_json: t.Optional(t.String()), url: t.Optional(t.String()), revised_prompt: t.Optional(t.String()) }, { additionalProperties: true }),
    ),
    usage: t.Object({ cost: t.Number({ description: 'Credits charged' }) }, { additionalProperties: true }),
  },
  { additionalProperties: true },
)

export const imagesEndpoint = surfaceEndpoint({
  path: '/v1/images/generations',
  parse: 'json',
  schema: ImagesSchema,
  surface: imagesSurface,
  response: { json: ImagesAnswerSchema },
  detail: { tags: ['Images'], summary: 'Generate images (OpenAI format), billed per image' },
})
