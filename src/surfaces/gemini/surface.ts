import { estimateChatInputTokens } from '../../billing/estimator'
import { worstCaseForTokens } from '../../billing/pricing'
import type { ModelEntry } from '../../catalog/catalog-schema'
import type { ConversationEncoding, Surface } from '../../dispatch/surface'
import { InvalidRequestError } from '../../errors/kinds'
import type { GenerateContentRequest } from '../../wire/gemini/request'
import { maxOutputTokensOf, outputAllowanceOf, requireOutputTokens } from '../output-tokens'
import { type TranslatedRoute, translatedEncoding, translatedRoute } from '../routes'
import { decodeGeminiRequest } from './decode'
import { encodeGenerateContent } from './encode'
import { GenerateContentStreamEncoder } from './encode-stream'
import { resolveGeminiModel } from './model-name'

/** One generateContent call as its endpoint hands it over: the model named in the path, the checked body, streamed or not. */
export interface GenerateContentCall {
  /** The model as the path names it. */
  model: string
  request: GenerateContentRequest
  stream: boolean
}

/** generationConfig fields that change what the answer is, which the canonical prompt cannot carry: refused rather than dropped. */
const UNSERVED_OUTPUT_FORMATS = ['responseSchema', 'responseJsonSchema'] as const

/**
 * POST /v1beta/models/{model}:generateContent and :streamGenerateContent (docs/api.md#gemini-api):
 * every chat model, through the canonical prompt on each of its routes, answered in Google's
 * format with the cost in `usageMetadata`. `maxOutputTokens` plays `max_tokens`: omitted, the
 * model's maximum, which is what the hold assumes and every route is told.
 */
export const generateContent: Surface<GenerateContentCall, TranslatedRoute> = {
  async plan(services, { caller, body: call }) {
    const resolved = await resolveGeminiModel(services, caller, call.model, 'chat')
    const { model } = resolved
    const maxTokens = outputTokensOf(call, model)
    refuseUnservedConfig(call.request)
    const prompt = decodeGeminiRequest(call.request, maxTokens, call.stream)
    const inputTokens = estimateGeminiInputTokens(call.request)
    return {
      model: resolved,
      usable: translatedRoute,
      call: (routes) => ({
        kind: 'conversation',
        modelId: model.id,
        routes,
        holdAmount: worstCaseForTokens(model.pricing, inputTokens, maxTokens),
        outputCap: { param: 'generationConfig.maxOutputTokens', tokens: maxTokens, given: call.request.generationConfig?.maxOutputTokens !== undefined },
        send: (route, target) => route.translate.send(target, prompt),
        encoding: (route): ConversationEncoding =>
          translatedEncoding(
            route,
            { streaming: call.stream, inputTokens, outputTokenLimit: maxTokens },
            {
              encodeAnswer: (answer, cost) => encodeGenerateContent(answer, model.id, cost),
              encodeStream: () => new GenerateContentStreamEncoder(model.id),
            },
          ),
      }),
    }
  },
}

function outputTokensOf(call: GenerateContentCall, model: ModelEntry): number {
  const requested = call.request.generationConfig?.maxOutputTokens
  if (requested === undefined) return outputAllowanceOf(model, undefined)
  return requireOutputTokens(requested, 'generationConfig.maxOutputTokens', maxOutputTokensOf(model), call.model)
}

function refuseUnservedConfig(request: GenerateContentRequest): void {
  const config = request.generationConfig ?? {}
  for (const field of UNSERVED_OUTPUT_FORMATS) {
    if (config[field] !== undefined)
      throw new InvalidRequestError(`generationConfig.${field} is not served for this model through this gateway.`, { param: `generationConfig.${field}` })
  }
  const mimeType = config.responseMimeType
  if (mimeType !== undefined && mimeType !== 'text/plain') {
    throw new InvalidRequestError(
      `generationConfig.responseMimeType ${JSON.stringify(mimeType)} is not served for this model through this gateway; only text/plain is.`,
      {
        param: 'generationConfig.responseMimeType',
      },
    )
  }
}

/** The gateway's estimate of a request's input tokens: what holds are sized from and countTokens answers. */
export function estimateGeminiInputTokens(request: GenerateContentRequest): number {
  return estimateChatInputTokens({ messages: request.contents, system: request.systemInstruction, tools: request.tools })
}
