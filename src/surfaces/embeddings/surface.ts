import { boundedTextTokens, scanBudget } from '../../billing/estimator'
import { chargePerMillion } from '../../billing/pricing'
import { trustedCount } from '../../billing/usage-guard'
import type { ModelEntry } from '../../catalog/catalog-schema'
import type { PricedAnswer, Route, Surface } from '../../dispatch/surface'
import { InvalidRequestError } from '../../errors/kinds'
import type { EmbeddingsCapability, MediaCapability } from '../../providers/adapter'
import { jsonObject, readJson, readJsonObject, usageWithCost } from '../../streaming/upstream-json'
import { resolveTypedModel } from '../typed-model'
import type { EmbeddingsBody } from './schema'

/**
 * An OpenAI-format route gets the client's body as it is; another API (Gemini) gets the texts
 * through its embeddings capability, and its vectors come back in OpenAI's shape.
 */
type EmbeddingsRoute = (Route & { mode: 'native'; media: MediaCapability }) | (Route & { mode: 'translated'; embeddings: EmbeddingsCapability })

function embeddingsRoute(route: Route): EmbeddingsRoute | undefined {
  const { media, embeddings } = route.adapter
  if (media) return { ...route, mode: 'native', media }
  if (embeddings) return { ...route, mode: 'translated', embeddings }
  return undefined
}

/**
 * POST /v1/embeddings, billed on input tokens: the hold is the gateway's estimate of the input,
 * the charge the provider's `prompt_tokens` when it reports them, else that estimate.
 */
export const embeddingsSurface: Surface<EmbeddingsBody, EmbeddingsRoute> = {
  async plan(services, { caller, body }) {
    const resolved = await resolveTypedModel(services, caller, body.model, 'embedding', '/v1/embeddings')
    const { model } = resolved
    const estimate = inputTokens(body.input)
    return {
      model: resolved,
      usable: embeddingsRoute,
      call: (routes) => ({
        kind: 'priced',
        modelId: model.id,
        routes,
        holdAmount: chargePerMillion(model.pricing.input, estimate),
        send: (route, target) =>
          route.mode === 'native'
            ? route.media.send(target, '/embeddings', JSON.stringify({ ...body, model: route.upstreamModel }))
            : route.embeddings.send(target, texts(body.input), body.dimensions),
        price: (response, route) =>
          route.mode === 'native' ? priceNative(model, response, estimate) : priceTranslated(model, response, route.embeddings, body, estimate),
      }),
    }
  },
}

/** Input tokens of an embeddings input: text by the estimator, token arrays by their length. */
function inputTokens(input: EmbeddingsBody['input']): number {
  const budget = scanBudget()
  if (typeof input === 'string') return boundedTextTokens(input, budget)
  const items: readonly (string | number | number[])[] = input
  return items.reduce((total: number, item) => total + (typeof item === 'string' ? boundedTextTokens(item, budget) : Array.isArray(item) ? item.length : 1), 0)
}

/** A vector as the OpenAI SDK decodes it: base64 of the little-endian float32 values, in order. */
function encodeVector(vector: number[], format: EmbeddingsBody['encoding_format']): number[] | string {
  return format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector
}

function texts(input: EmbeddingsBody['input']): string[] {
  if (typeof input === 'string') return [input]
  if (isTextList(input)) return input
  throw new InvalidRequestError('This model takes text input; token arrays need an OpenAI-format route.', { param: 'input' })
}

function isTextList(input: EmbeddingsBody['input']): input is string[] {
  const items: readonly unknown[] = typeof input === 'string' ? [] : input
  return items.every((item) => typeof item === 'string')
}

/**
 * The provider's `prompt_tokens` as reported, checked only when priced: a count pricing refuses
 * charges the full hold and marks the usage invalid (BilledCall), it does not fail the call.
 */
async function priceNative(model: ModelEntry, response: Response, estimate: number): Promise<PricedAnswer> {
  const answer = await readJsonObject(response)
  const reported = jsonObject(answer.usage)?.prompt_tokens
  const tokens = reported ?? estimate
  return {
    cost: () => chargePerMillion(model.pricing.input, trustedCount(tokens, 'count')),
    usage: { input_tokens: tokens, source: reported === undefined ? 'estimate' : 'provider' },
    respond: (cost) => Response.json({ ...answer, model: model.id, usage: usageWithCost(answer.usage, cost) }),
  }
}

/** The API reports no token count: the gateway's own estimate is billed and shown. */
async function priceTranslated(
  model: ModelEntry,
  response: Response,
  embeddings: EmbeddingsCapability,
  body: EmbeddingsBody,
  estimate: number,
): Promise<PricedAnswer> {
  const vectors = embeddings.readVectors(await readJson(response))
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
