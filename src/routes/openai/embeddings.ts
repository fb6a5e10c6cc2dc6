import { Elysia, t } from 'elysia'
import { estimateTextTokens } from '../../billing/estimator'
import { chargePerMillion } from '../../billing/pricing'
import { billedEndpoint, openAiPassthrough, type PricedAnswer } from '../../dispatch/openai-endpoint'
import type { Route } from '../../dispatch/route-plan'
import { InvalidRequestError } from '../../errors/kinds'
import type { GatewayContext } from '../../http/gateway-context'
import type { ModelEntry } from '../../catalog/catalog-schema'
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

type EmbeddingsBody = typeof EmbeddingsSchema.static

/** Input tokens of an embeddings input: text by the estimator, token arrays by their length. */
function inputTokens(input: EmbeddingsBody['input']): number {
  if (typeof input === 'string') return estimateTextTokens(input)
  return (input as (string | number | number[])[]).reduce(
    (total: number, item) => total + (typeof item === 'string' ? estimateTextTokens(item) : Array.isArray(item) ? item.length : 1),
    0,
  )
}

/** A vector as the OpenAI SDK decodes it: base64 of little-endian float32 (WIRE.md §4.1). */
function encodeVector(vector: number[], format: EmbeddingsBody['encoding_format']): number[] | string {
  return format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector
}

type EmbeddingsRoute = (Route & { mode: 'native' }) | (Route & { mode: 'translated' })

/**
 * POST /v1/embeddings (OpenAI's shape; float or base64 vectors as asked), billed on input tokens.
 * OpenAI-format routes get the body as it is; other APIs (Gemini) get the texts, and their
 * vectors come back in OpenAI's shape.
 */
export function embeddingsRoutes(context: GatewayContext, services: Services) {
  return new Elysia({ name: 'routes/embeddings' }).use(context).post(
    '/v1/embeddings',
    ({ body, caller, requestId, request }) => {
      const estimate = inputTokens(body.input)
      const passthrough = openAiPassthrough('/embeddings', (model) => JSON.stringify({ ...body, model }))
      return billedEndpoint<EmbeddingsRoute>(
        services,
        caller,
        {
          modelId: body.model,
          type: 'embedding',
          endpoint: '/v1/embeddings',
          usable: (route) =>
            route.adapter.sendOpenAiRequest
              ? { ...route, mode: 'native' }
              : route.adapter.sendEmbeddings && route.adapter.readEmbeddings
                ? { ...route, mode: 'translated' }
                : undefined,
          send: (route, target) => {
            if (route.mode === 'native') return passthrough.send({ ...route, send: route.adapter.sendOpenAiRequest! }, target)
            return route.adapter.sendEmbeddings!(target, texts(body.input), body.dimensions)
          },
          hold: (model) => chargePerMillion(model.pricing.input, estimate),
          price: (model, response, route) => (route.mode === 'native' ? priceNative(model, response, estimate) : priceTranslated(model, response, route, body, estimate)),
        },
        requestId,
        request.signal,
      )
    },
    { parse: 'json', body: EmbeddingsSchema, detail: { tags: ['Embeddings'], summary: 'Create embeddings (OpenAI format), billed on input tokens' } },
  )
}

function texts(input: EmbeddingsBody['input']): string[] {
  if (typeof input === 'string') return [input]
  if (input.every((item) => typeof item === 'string')) return input as string[]
  throw new InvalidRequestError('This model takes text input; token arrays need an OpenAI-format route.', { param: 'input' })
}

async function priceNative(model: ModelEntry, response: Response, estimate: number): Promise<PricedAnswer> {
  const answer = (await response.json()) as Record<string, unknown> & { usage?: { prompt_tokens?: number } }
  const tokens = answer.usage?.prompt_tokens ?? estimate
  return {
    cost: () => chargePerMillion(model.pricing.input, tokens),
    usage: { input_tokens: tokens, source: answer.usage?.prompt_tokens === undefined ? 'estimate' : 'provider' },
    respond: (cost) => Response.json({ ...answer, model: model.id, usage: { ...(answer.usage ?? {}), cost } }),
  }
}

/** The API reports no token count: the gateway's own estimate is billed and shown. */
async function priceTranslated(model: ModelEntry, response: Response, route: Route, body: EmbeddingsBody, estimate: number): Promise<PricedAnswer> {
  const vectors = route.adapter.readEmbeddings!(await response.json())
  return {
    cost: () => chargePerMillion(model.pricing.input, estimate),
    usage: { input_tokens: estimate, source: 'estimate' },
    respond: (cost) =>
      Response.json({
        object: 'list',
        data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encodeVector(vector, body.encoding_format) })),
        model: model.id,
        usage: { prompt_tokens: estimate, total_tokens: estimate, cost },
      }),
  }
}
