import { Elysia, t } from 'elysia'
import { estimateTextTokens } from '../../billing/estimator'
import { chargePerMillion } from '../../billing/pricing'
import { billedOpenAiEndpoint } from '../../dispatch/openai-endpoint'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'

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

/** Input tokens of an embeddings input: text by the estimator, token arrays by their length. */
function inputTokens(input: string | string[] | number[] | number[][]): number {
  if (typeof input === 'string') return estimateTextTokens(input)
  return (input as (string | number | number[])[]).reduce(
    (total: number, item) => total + (typeof item === 'string' ? estimateTextTokens(item) : Array.isArray(item) ? item.length : 1),
    0,
  )
}

/** POST /v1/embeddings (OpenAI's shape; float or base64 vectors as asked), billed on input tokens. */
export function embeddingsRoutes(context: GatewayContext, services: Services) {
  return new Elysia({ name: 'routes/embeddings' }).use(context).post(
    '/v1/embeddings',
    ({ body, caller, requestId, request }) => {
      const estimate = inputTokens(body.input)
      return billedOpenAiEndpoint(
        services,
        caller,
        {
          modelId: body.model,
          type: 'embedding',
          endpoint: '/v1/embeddings',
          path: '/embeddings',
          body: (model) => JSON.stringify({ ...body, model }),
          hold: (model) => chargePerMillion(model.pricing.input, estimate),
          async price(model, response) {
            const answer = (await response.json()) as Record<string, unknown> & { usage?: { prompt_tokens?: number } }
            const tokens = answer.usage?.prompt_tokens ?? estimate
            return {
              cost: chargePerMillion(model.pricing.input, tokens),
              usage: { input_tokens: tokens, source: answer.usage?.prompt_tokens === undefined ? 'estimate' : 'provider' },
              respond: (cost) => Response.json({ ...answer, model: model.id, usage: { ...(answer.usage ?? {}), cost } }),
            }
          },
        },
        requestId,
        request.signal,
      )
    },
    { parse: 'json', body: EmbeddingsSchema, detail: { tags: ['Embeddings'], summary: 'Create embeddings (OpenAI format), billed on input tokens' } },
  )
}
