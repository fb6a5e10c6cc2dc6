import { Elysia, t } from 'elysia'
import { chargePerUnit } from '../../billing/pricing'
import { billedEndpoint, openAiPassthrough } from '../../dispatch/openai-endpoint'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'
import { JsonInteger } from '../schemas'

/** The most images one request may ask for: OpenAI's own limit, and so the bound of the hold. */
const MAX_IMAGES = 10

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

/** POST /v1/images/generations (OpenAI's shape), billed per image returned; the hold covers `n`. */
export function imagesRoutes(context: GatewayContext, services: Services) {
  return new Elysia({ name: 'routes/images' }).use(context).post(
    '/v1/images/generations',
    ({ body, caller, requestId, request }) =>
      billedEndpoint(
        services,
        caller,
        {
          modelId: body.model,
          type: 'image',
          endpoint: '/v1/images/generations',
          ...openAiPassthrough('/images/generations', (model) => JSON.stringify({ ...body, model })),
          hold: (model) => chargePerUnit(model.pricing.image, body.n ?? 1),
          async price(model, response) {
            const answer = (await response.json()) as Record<string, unknown> & { data?: unknown[]; usage?: Record<string, unknown> }
            const images = Array.isArray(answer.data) ? answer.data.length : 0
            return {
              cost: () => chargePerUnit(model.pricing.image, images),
              usage: { images },
              respond: (cost) => Response.json({ ...answer, usage: { ...(answer.usage ?? {}), cost } }),
            }
          },
        },
        requestId,
        request.signal,
      ),
    { parse: 'json', body: ImagesSchema, detail: { tags: ['Images'], summary: 'Generate images (OpenAI format), billed per image' } },
  )
}
