import { InvalidRequestError } from '../../errors/kinds'
import { isRecord } from '../../util/is-record'
import type { EmbeddingsBody } from '../embeddings/schema'

/**
 * embedContent and batchEmbedContents (https://ai.google.dev/api/embeddings) read as a
 * /v1/embeddings request, which the embeddings surface serves on every route of the model
 * (natively on OpenAI-format routes, through batchEmbedContents on Gemini's); its answer,
 * which the gateway wrote itself, is then written in Google's shape.
 */

/** Google's limit on one batch. */
export const MAX_BATCH_EMBED_REQUESTS = 100

function invalid(param: string, message: string): never {
  throw new InvalidRequestError(`${param}: ${message}`, { param })
}

/** The texts of an embedContent body (`{content, outputDimensionality}`) as an embeddings request for `modelId`. */
export function readEmbedContent(body: unknown, modelId: string): EmbeddingsBody {
  if (!isRecord(body)) invalid('body', 'must be a JSON object.')
  return { model: modelId, input: [contentText(body.content, 'content')], ...dimensionsOf(body.outputDimensionality, 'outputDimensionality') }
}

/**
 * The texts of a batchEmbedContents body (`{requests: [{model, content, outputDimensionality}]}`):
 * every request must name the path's model (Google's rule) and ask for the same dimensions (one
 * upstream call serves them all).
 */
export function readBatchEmbedContents(body: unknown, modelId: string, sameModel: (named: string) => boolean): EmbeddingsBody {
  if (!isRecord(body)) invalid('body', 'must be a JSON object.')
  const requests = body.requests
  if (!Array.isArray(requests) || requests.length === 0 || requests.length > MAX_BATCH_EMBED_REQUESTS) {
    invalid('requests', `must be a list of 1 to ${MAX_BATCH_EMBED_REQUESTS} embed requests.`)
  }
  const dimensions = new Set<number | undefined>()
  const input = requests.map((request, index) => {
    const at = `requests[${index}]`
    if (!isRecord(request)) invalid(at, 'must be an object.')
    if (request.model !== undefined && (typeof request.model !== 'string' || !sameModel(request.model))) {
      invalid(`${at}.model`, "must name the model in the request's path.")
    }
    dimensions.add(dimensionsOf(request.outputDimensionality, `${at}.outputDimensionality`).dimensions)
    return contentText(request.content, `${at}.content`)
  })
  if (dimensions.size > 1) invalid('requests', 'every request of one batch must ask for the same outputDimensionality.')
  const [asked] = dimensions
  return { model: modelId, input, ...(asked === undefined ? {} : { dimensions: asked }) }
}

function contentText(content: unknown, at: string): string {
  if (!isRecord(content) || !Array.isArray(content.parts) || content.parts.length === 0) invalid(at, 'must be {parts: [{text}]}.')
  return content.parts
    .map((part, index) => {
      if (!isRecord(part) || typeof part.text !== 'string') invalid(`${at}.parts[${index}]`, 'only text parts are embedded.')
      return part.text
    })
    .join('\n')
}

function dimensionsOf(value: unknown, at: string): { dimensions?: number } {
  if (value === undefined || value === null) return {}
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) invalid(at, 'must be a whole number of at least 1.')
  return { dimensions: value }
}

/**
 * The embeddings surface's answer in Google's shape: one `embedding` or a list of `embeddings`,
 * and, beyond Google's fields, `usageMetadata` with the tokens billed and the cost. An error
 * answer passes as it is: it was already written in Google's envelope for this path.
 */
export async function geminiEmbeddingAnswer(answer: Response, batch: boolean): Promise<Response> {
  if (!answer.ok) return answer
  const written: { data: { embedding: number[] }[]; usage: { prompt_tokens: number; cost: number } } = await answer.json()
  const vectors = written.data.map((item) => ({ values: item.embedding }))
  const usageMetadata = { promptTokenCount: written.usage.prompt_tokens, totalTokenCount: written.usage.prompt_tokens, cost: written.usage.cost }
  const body = batch ? { embeddings: vectors, usageMetadata } : { embedding: vectors[0], usageMetadata }
  const headers = new Headers(answer.headers)
  headers.delete('content-length')
  return Response.json(body, { status: answer.status, headers })
}
