import { Elysia, t } from 'elysia'
import { type Caller, callerId, requireKeyScope } from '../../auth/authenticate'
import { isModelAllowed } from '../../auth/model-access'
import type { ModelEntry } from '../../catalog/catalog-schema'
import { ModelNotFoundError, NotFoundError } from '../../errors/kinds'
import type { GatewayContext } from '../../http/gateway-context'
import { answerResponse, errorResponses, eventStream, KEYED_READ_ERRORS, MODEL_CALL_ERRORS } from '../../http/openapi/responses'
import { refuseInvalidBody } from '../../http/schema-check'
import { isRecord } from '../../util/is-record'
import { embeddingsSurface } from '../embeddings/surface'
import { billedCall, type SurfaceServices, surfaceRequest } from '../endpoint'
import { readGenerateContentRequest } from './decode'
import { geminiEmbeddingAnswer, readBatchEmbedContents, readEmbedContent } from './embed'
import { gatewayModelId, resolveGeminiModel } from './model-name'
import { GeminiBodySchema, GeminiModelSchema } from './schema'
import { estimateGeminiInputTokens, generateContent } from './surface'

/** The model methods served on POST /v1beta/models/{model}:{method}: for chat models and for embedding models. */
const CHAT_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens']
const EMBEDDING_METHODS = ['embedContent', 'batchEmbedContents']

/**
 * The Gemini API (docs/api.md#gemini-api), for Google's Gen AI SDKs and Gemini CLI: one path
 * serves every model method, named after a colon, as Google's REST API does; the model list and
 * retrieve under the same prefix. Errors are written in Google's envelope (errors/render.ts).
 */
export function geminiEndpoints(context: GatewayContext, services: SurfaceServices) {
  return new Elysia({ name: 'surfaces/gemini' })
    .use(context)
    .post('/v1beta/models/*', ({ body, caller, requestId, request, params }) => modelMethod(services, params['*'], body, caller, requestId, request), {
      parse: 'json',
      transform: ({ body }: { body: unknown }) => refuseInvalidBody(GeminiBodySchema, body),
      body: GeminiBodySchema,
      detail: {
        tags: ['Gemini API'],
        summary: 'Generate content, stream it, count its tokens, or embed text (Gemini format), billed to the caller',
        description:
          "x-goog-api-key, the key query parameter, or Bearer. `:generateContent` answers one GenerateContentResponse; `:streamGenerateContent?alt=sse` streams them as server-sent events (without `alt=sse`, a JSON array); `usageMetadata.cost` carries the credits charged. `:countTokens` is free: the gateway's own estimate, `{totalTokens}`. Embedding models: `:embedContent` answers `{embedding: {values}}`, `:batchEmbedContents` `{embeddings: [{values}]}` (up to 100 requests), both with `usageMetadata.cost`.",
        parameters: [
          MODEL_PARAMETER,
          {
            name: 'method',
            in: 'path',
            required: true,
            schema: { type: 'string', enum: [...CHAT_METHODS, ...EMBEDDING_METHODS] },
            description: 'The model method',
          },
        ],
        responses: {
          ...answerResponse('A GenerateContentResponse; a stream of them with `alt=sse`', {
            'application/json': GeminiAnswerDocument,
            'text/event-stream': eventStream(
              'One GenerateContentResponse per `data:` event; the last carries the finish reason and `usageMetadata` with `cost`',
            ),
          }),
          ...errorResponses('google', MODEL_CALL_ERRORS),
        },
      },
    })
    .get('/v1beta/models', async ({ caller }) => ({ models: await listedModels(services, caller) }), {
      response: t.Object({ models: t.Array(GeminiModelSchema) }),
      detail: {
        tags: ['Gemini API'],
        summary: 'List models (Gemini format)',
        description: 'The chat and embedding models the caller may use, as `models/<gateway id>`.',
        responses: errorResponses('google', KEYED_READ_ERRORS),
      },
    })
    .get('/v1beta/models/*', ({ caller, params }) => retrievedModel(services, caller, decodedPath(params['*'])), {
      response: GeminiModelSchema,
      detail: {
        tags: ['Gemini API'],
        summary: 'Retrieve a model (Gemini format)',
        parameters: [MODEL_PARAMETER],
        responses: errorResponses('google', [...KEYED_READ_ERRORS, 404]),
      },
    })
}

/** The `{model}` of every /v1beta/models path, as the API document names it. */
const MODEL_PARAMETER = {
  name: 'model',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: 'A gateway model id (slash raw or %2F), or the part after its vendor prefix',
} as const

const GeminiAnswerDocument = t.Object(
  {},
  {
    additionalProperties: true,
    description:
      'A GenerateContentResponse: `candidates`, `usageMetadata` (promptTokenCount, candidatesTokenCount, totalTokenCount, cachedContentTokenCount, cost), `modelVersion`, `responseId`',
  },
)

async function modelMethod(services: SurfaceServices, path: string, body: unknown, caller: Caller, requestId: string, request: Request): Promise<Response> {
  const decoded = decodedPath(path)
  const colon = decoded.lastIndexOf(':')
  const model = colon > 0 ? decoded.slice(0, colon) : decoded
  const method = colon > 0 ? decoded.slice(colon + 1) : ''
  switch (method) {
    case 'generateContent':
    case 'streamGenerateContent':
      return generate(services, { model, stream: method === 'streamGenerateContent' }, body, caller, requestId, request)
    case 'countTokens':
      return Response.json(await countTokens(services, model, body, caller))
    case 'embedContent':
    case 'batchEmbedContents':
      return embed(services, { model, batch: method === 'batchEmbedContents' }, body, caller, requestId, request)
    default:
      throw new NotFoundError(
        `No Gemini API method '${method}' on /v1beta/models/{model}; this gateway serves ${[...CHAT_METHODS, ...EMBEDDING_METHODS].join(', ')}.`,
      )
  }
}

async function generate(
  services: SurfaceServices,
  called: { model: string; stream: boolean },
  body: unknown,
  caller: Caller,
  requestId: string,
  original: Request,
): Promise<Response> {
  requireKeyScope(caller, 'chat')
  const generateRequest = readGenerateContentRequest(body)
  const sse = new URL(original.url).searchParams.get('alt') === 'sse'
  // Without alt=sse a stream is a JSON array of responses: served as one whole answer in an array.
  const stream = called.stream && sse
  const sent = isRecord(body) ? body : {}
  const call = surfaceRequest({ model: called.model, body: sent, request: generateRequest, stream }, caller, requestId, original)
  const answer = await billedCall(
    services,
    { path: callPath(services, called.model, called.stream ? 'streamGenerateContent' : 'generateContent'), surface: generateContent },
    call,
    original,
  )
  if (!called.stream || sse || !answer.ok) return answer
  const headers = new Headers(answer.headers)
  headers.delete('content-length')
  return new Response(`[${await answer.text()}]`, { status: answer.status, headers })
}

/** embedContent and batchEmbedContents: the embeddings surface's call, answered in Google's shape (embed.ts). */
async function embed(
  services: SurfaceServices,
  called: { model: string; batch: boolean },
  body: unknown,
  caller: Caller,
  requestId: string,
  original: Request,
): Promise<Response> {
  requireKeyScope(caller, 'embeddings')
  const modelId = gatewayModelId(services.catalog, called.model)
  const sameModel = (named: string) => gatewayModelId(services.catalog, named) === modelId
  const embeddings = called.batch ? readBatchEmbedContents(body, modelId, sameModel) : readEmbedContent(body, modelId)
  const path = callPath(services, called.model, called.batch ? 'batchEmbedContents' : 'embedContent')
  const answer = await billedCall(services, { path, surface: embeddingsSurface }, surfaceRequest(embeddings, caller, requestId, original), original)
  return geminiEmbeddingAnswer(answer, called.batch)
}

/** countTokens: free, the gateway's own estimate (the one holds are sized from), for a model the caller may use. */
async function countTokens(services: SurfaceServices, model: string, body: unknown, caller: Caller): Promise<{ totalTokens: number }> {
  requireKeyScope(caller, 'chat')
  await resolveGeminiModel(services, caller, model, 'chat')
  const nested = isRecord(body) ? body.generateContentRequest : undefined
  const request = isRecord(nested) ? readGenerateContentRequest(nested, 'generateContentRequest.') : readGenerateContentRequest(body)
  await services.rateLimiter.checkFree(callerId(caller))
  const tokens = estimateGeminiInputTokens(request)
  await services.rateLimiter.recordFreeTokens(callerId(caller), tokens)
  return { totalTokens: tokens }
}

/** What Google's model resource says of a catalogue model (https://ai.google.dev/api/models#Model). */
function geminiModel(model: ModelEntry) {
  return {
    name: `models/${model.id}`,
    displayName: model.id,
    ...(model.contextWindow ? { inputTokenLimit: model.contextWindow } : {}),
    ...(model.maxOutputTokens ? { outputTokenLimit: model.maxOutputTokens } : {}),
    supportedGenerationMethods: model.type === 'chat' ? CHAT_METHODS : EMBEDDING_METHODS,
  }
}

function servedHere(model: ModelEntry): boolean {
  return model.type === 'chat' || model.type === 'embedding'
}

function mayUse(caller: Caller, model: ModelEntry): boolean {
  return caller.kind !== 'api-key' || isModelAllowed(caller.key.allowedModels, model.id)
}

async function listedModels(services: SurfaceServices, caller: Caller) {
  return services.catalog
    .listModels()
    .filter((model) => servedHere(model) && mayUse(caller, model))
    .map(geminiModel)
}

async function retrievedModel(services: SurfaceServices, caller: Caller, named: string) {
  const model = services.catalog.model(gatewayModelId(services.catalog, named))
  if (!model || !servedHere(model) || !mayUse(caller, model)) {
    throw new ModelNotFoundError(`The model '${named}' does not exist or you do not have access to it; GET /v1beta/models lists them.`, { param: 'model' })
  }
  return geminiModel(model)
}

/**
 * The path an `Idempotency-Key` is kept under (docs/api.md#idempotent-retries): one per model and
 * method, so a key reused for another model is not answered with this one's answer. A model the
 * catalogue does not have is refused by the plan; its calls share one bounded path.
 */
function callPath(services: SurfaceServices, named: string, method: string): string {
  const id = gatewayModelId(services.catalog, named)
  return `/v1beta/models/${services.catalog.model(id) ? id : '*'}:${method}`
}

/** The path after /v1beta/models/ as the client meant it: the SDKs encode a slash as %2F. */
function decodedPath(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}
