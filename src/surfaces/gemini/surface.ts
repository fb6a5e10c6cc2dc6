import { estimateChatInputTokens } from '../../billing/estimator'
import { worstCaseForTokens } from '../../billing/pricing'
import type { Prompt } from '../../canonical/prompt'
import { estimatedUsage } from '../../canonical/usage'
import type { ModelEntry } from '../../catalog/catalog-schema'
import type { ConversationEncoding, NonEmpty, Surface } from '../../dispatch/surface'
import { InvalidRequestError } from '../../errors/kinds'
import type { GenerateContentCapability, NativeBody } from '../../providers/adapter'
import { isRecord } from '../../util/is-record'
import type { GenerateContentRequest } from '../../wire/gemini/request'
import { maxOutputTokensOf, outputAllowanceOf, requireOutputTokens } from '../output-tokens'
import { type ConversationRoute, conversationRoute, translatedEncoding } from '../routes'
import { decodeGeminiRequest } from './decode'
import { encodeGenerateContent } from './encode'
import { GenerateContentStreamEncoder } from './encode-stream'
import { resolveGeminiModel } from './model-name'
import { observeGeminiStream } from './observe-native'

type GeminiRoute = ConversationRoute<GenerateContentCapability>

/** One generateContent call as its endpoint hands it over: the model named in the path, the body as sent and as checked, streamed or not. */
export interface GenerateContentCall {
  /** The model as the path names it. */
  model: string
  /** The body as the client sent it: what a native route gets, with the output limit set. */
  body: NativeBody
  /** The same body, checked and typed: what a translated route gets. */
  request: GenerateContentRequest
  stream: boolean
}

/** generationConfig fields that change what the answer is, which the canonical prompt cannot carry: served on native routes only, never dropped. */
const STRUCTURED_OUTPUT = ['responseSchema', 'responseJsonSchema'] as const

/**
 * POST /v1beta/models/{model}:generateContent and :streamGenerateContent (docs/api.md#gemini-api),
 * for every chat model: on Gemini routes the body passes through as the client wrote it (thinking
 * config and structured output included), elsewhere it goes through the canonical prompt. Either
 * way the answer is in Google's format with the cost in `usageMetadata`. `maxOutputTokens` plays
 * `max_tokens`: omitted, the model's maximum, which the hold assumes and every route is told.
 */
export const generateContent: Surface<GenerateContentCall, GeminiRoute> = {
  async plan(services, { caller, body: call }) {
    const resolved = await resolveGeminiModel(services, caller, call.model, 'chat')
    const { model } = resolved
    const maxTokens = outputTokensOf(call, model)
    const inputTokens = estimateGeminiInputTokens(call.request)
    return {
      model: resolved,
      usable: (route) => conversationRoute(route, route.adapter.generateContent),
      call(planned) {
        const routes = servingRoutes(planned, call.request)
        const translated = routes.some((route) => route.mode === 'translated')
        const prompt: Prompt | undefined = translated ? decodeGeminiRequest(call.request, maxTokens, call.stream) : undefined
        const nativeBody = {
          ...call.body,
          generationConfig: { ...(isRecord(call.body.generationConfig) ? call.body.generationConfig : {}), maxOutputTokens: maxTokens },
        }
        return {
          kind: 'conversation',
          modelId: model.id,
          routes,
          holdAmount: worstCaseForTokens(model.pricing, inputTokens, maxTokens),
          outputCap: { param: 'generationConfig.maxOutputTokens', tokens: maxTokens, given: call.request.generationConfig?.maxOutputTokens !== undefined },
          send: (route, target) =>
            route.mode === 'native'
              ? route.native.send(target, nativeBody, call.stream)
              : route.translate.send(target, prompt ?? decodeGeminiRequest(call.request, maxTokens, call.stream)),
          encoding: (route) => geminiEncoding(route, model.id, inputTokens, maxTokens, call.stream),
        }
      },
    }
  },
}

function geminiEncoding(route: GeminiRoute, shownModel: string, inputTokens: number, outputTokenLimit: number, streaming: boolean): ConversationEncoding {
  const shape = { streaming, inputTokens, outputTokenLimit }
  if (route.mode === 'translated') {
    return translatedEncoding(route, shape, {
      encodeAnswer: (answer, cost) => encodeGenerateContent(answer, shownModel, cost),
      encodeStream: () => new GenerateContentStreamEncoder(shownModel),
    })
  }
  const usageOf = route.native.usage
  return {
    ...shape,
    mode: 'native',
    nativeUsage: (answer) => usageOf(answer.usageMetadata),
    estimateNative: () => estimatedUsage(inputTokens, 0),
    presentNative: (answer, cost) => ({
      ...answer,
      modelVersion: shownModel,
      usageMetadata: { ...(isRecord(answer.usageMetadata) ? answer.usageMetadata : {}), cost },
    }),
    observeNative: () => observeGeminiStream({ shownModel, inputTokens, usageOf }),
  }
}

function outputTokensOf(call: GenerateContentCall, model: ModelEntry): number {
  const requested = call.request.generationConfig?.maxOutputTokens
  if (requested === undefined) return outputAllowanceOf(model, undefined)
  return requireOutputTokens(requested, 'generationConfig.maxOutputTokens', maxOutputTokensOf(model), call.model)
}

/**
 * The routes that can serve the request: all of them, or, when it asks for structured output,
 * which only Google's own API honours, its native routes; none is 400 naming the field.
 */
function servingRoutes(routes: NonEmpty<GeminiRoute>, request: GenerateContentRequest): NonEmpty<GeminiRoute> {
  const field = structuredOutputField(request)
  if (field === undefined) return routes
  const [first, ...rest] = routes.filter((route) => route.mode === 'native')
  if (first === undefined) throw new InvalidRequestError(`${field} is served only on Gemini routes, and this model has none.`, { param: field })
  return [first, ...rest]
}

function structuredOutputField(request: GenerateContentRequest): string | undefined {
  const config = request.generationConfig ?? {}
  const asked = STRUCTURED_OUTPUT.find((field) => config[field] !== undefined)
  if (asked !== undefined) return `generationConfig.${asked}`
  const mimeType = config.responseMimeType
  return mimeType !== undefined && mimeType !== 'text/plain' ? 'generationConfig.responseMimeType' : undefined
}

/** The gateway's estimate of a request's input tokens: what holds are sized from and countTokens answers. */
export function estimateGeminiInputTokens(request: GenerateContentRequest): number {
  return estimateChatInputTokens({ messages: request.contents, system: request.systemInstruction, tools: request.tools })
}
