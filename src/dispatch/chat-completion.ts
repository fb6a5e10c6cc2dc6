import type { Caller } from '../auth/authenticate'
import { estimateChatInputTokens, estimateValueTokens } from '../billing/estimator'
import { worstCaseForTokens } from '../billing/pricing'
import type { ModelEntry } from '../catalog/catalog-schema'
import { requireModelType, resolveModel, type ResolvedModel } from '../catalog/resolve-model'
import { requireCount } from '../http/request-bounds'
import type { UpstreamTarget } from '../providers/adapter'
import { decodeChatRequest } from '../routes/openai/decode-chat'
import { encodeChatCompletion } from '../routes/openai/encode-chat'
import { ChatStreamEncoder } from '../routes/openai/encode-chat-stream'
import type { Services } from '../services'
import type { Usage } from '../spec/usage'
import { isRecord } from '../util/is-record'
import { BilledCall } from './billed-call'
import { relayChatStream } from './chat-stream'
import { deliver, withCost } from './deliver'
import { maxOutputTokensOf, outputAllowanceOf, requireOutputTokens } from './output-tokens'
import { planRoutes, translatedRoute, type Route, type TranslatedRoute } from './route-plan'

/** A route for chat completions: the body as it is where the API speaks OpenAI's format, else a translation. */
type ChatRoute = (Route & { mode: 'native'; send: (target: UpstreamTarget, body: Record<string, unknown>) => Promise<Response> }) | TranslatedRoute

function chatRoute(route: Route): ChatRoute | undefined {
  const send = route.adapter.sendChatCompletion
  return send ? { ...route, mode: 'native', send } : translatedRoute(route)
}

/** The most choices (`n`) one request may ask for: OpenAI's own limit. */
export const MAX_CHOICES = 128

/** A chat request's output-token fields; OpenAI reads max_completion_tokens first when both are sent. */
const OUTPUT_TOKEN_FIELDS = ['max_completion_tokens', 'max_tokens'] as const

export type ChatBody = Record<string, unknown> & { model: string; messages: unknown[] }

/**
 * POST /v1/chat/completions, billed: hold the worst case, try the routes in order, relay the
 * answer, settle. OpenAI-format routes get the body as it is; others (Anthropic's messages
 * API) get it translated through the canonical prompt, and the answer translated back.
 */
export async function chatCompletion(services: Services, caller: Caller, request: ChatBody, requestId: string, clientSignal: AbortSignal): Promise<Response> {
  const resolved = await resolveModel(services, caller, request.model)
  requireModelType(resolved, 'chat', '/v1/chat/completions')
  const body = withCustomModel(resolved, request)
  const options = planRoutes(services, resolved, chatRoute)
  const limits = checkLimits(body, options, request.model)
  const prompt = options.some((option) => option.mode === 'translated') ? decodeChatRequest(body) : undefined
  const inputTokens = estimateChatInputTokens(body)
  const call = await BilledCall.open(services, caller, holdAmount(options, limits, inputTokens), requestId, request.model, options[0]!.provider.name)

  const streaming = body.stream === true
  const clientWantsUsage = streaming && isRecord(body.stream_options) && body.stream_options.include_usage === true
  // Usage is always asked for: billing needs it whether or not the client shows it.
  const sent = streaming ? { ...body, stream_options: { ...(isRecord(body.stream_options) ? body.stream_options : {}), include_usage: true } } : body

  const answer = await call.reach(
    options,
    (option, target) =>
      option.mode === 'native'
        ? option.send(target, withinModelMaximum(sent, option.model))
        : // Omitted, max_tokens is the model's maximum (API.md §4.1): translated APIs are told it
          // (Anthropic's requires a number), so none falls back on a smaller default of its own.
          option.send(target, { ...prompt!, maxOutputTokens: outputTokensFor(option.model, limits.requested) ?? option.model.maxOutputTokens }),
    clientSignal,
  )
  return deliver(call, answer, inputTokens, {
    streaming,
    relayNative: (params) => relayChatStream({ ...params, clientWantsUsage }),
    nativeUsage: (completion) => answer.option.adapter.chatUsage?.(completion.usage),
    estimateNative: (completion) => estimatedUsage(inputTokens, completion),
    presentNative: (completion, cost) => ({ ...completion, model: answer.option.model.id, usage: withCost(completion.usage, cost) }),
    streamEncoder: () => new ChatStreamEncoder(answer.option.model.id, clientWantsUsage),
    encodeAnswer: (translated, cost) => encodeChatCompletion(translated, answer.option.model.id, cost),
  })
}

/** A custom model's defaults fill what the request left out; its system prompt goes first. */
function withCustomModel(resolved: ResolvedModel, request: ChatBody): ChatBody {
  if (resolved.kind !== 'custom') return request
  const { custom } = resolved
  const messages = custom.system ? [{ role: 'system', content: custom.system }, ...request.messages] : request.messages
  return { ...(custom.defaults ?? {}), ...request, messages }
}

/** The numbers that size a chat hold, checked. */
interface ChatLimits {
  /** Output tokens the request asks for (max_completion_tokens, else max_tokens); undefined: each model's maximum. */
  requested: number | undefined
  choices: number
}

/**
 * Checks every number that sizes the hold before anything is reserved: `n`, and each
 * output-token field against the model's maximum. The schema has checked what the client sent;
 * this also covers a custom model's defaults, which no schema saw.
 *
 * An alias fails over across models with different maximums. Its request is refused only above
 * the largest of them, and each candidate is asked (and held) for at most its own maximum: a
 * fallback model with a smaller limit then still serves the call, where passing the number
 * through would make it refuse the request as a client error and end the failover.
 */
function checkLimits(body: ChatBody, options: Route[], modelName: string): ChatLimits {
  const choices = body.n === undefined ? 1 : requireCount(body.n, 'n', MAX_CHOICES, 'the most choices one request may ask for')
  const maximum = Math.max(...options.map((option) => maxOutputTokensOf(option.model)))
  const [completionTokens, tokens] = OUTPUT_TOKEN_FIELDS.map((field) => (body[field] === undefined ? undefined : requireOutputTokens(body[field], field, maximum, modelName)))
  return { requested: completionTokens ?? tokens, choices }
}

/** The output tokens asked of one candidate model: the request's number within the model's maximum. */
function outputTokensFor(model: ModelEntry, requested: number | undefined): number | undefined {
  return requested === undefined ? undefined : Math.min(requested, maxOutputTokensOf(model))
}

/** The body as one candidate model receives it: its output-token fields no larger than that model's maximum. */
function withinModelMaximum(body: ChatBody, model: ModelEntry): ChatBody {
  const maximum = maxOutputTokensOf(model)
  const over = OUTPUT_TOKEN_FIELDS.filter((field) => typeof body[field] === 'number' && body[field] > maximum)
  return over.length === 0 ? body : { ...body, ...Object.fromEntries(over.map((field) => [field, maximum])) }
}

/** The dearest worst case among the routes that may serve: failover must never outrun the hold. */
function holdAmount(options: Route[], limits: ChatLimits, inputTokens: number): bigint {
  let amount = 0n
  for (const { model } of options) {
    const maxOutput = outputAllowanceOf(model, outputTokensFor(model, limits.requested)) * limits.choices
    const worst = worstCaseForTokens(model.pricing, inputTokens, maxOutput)
    if (worst > amount) amount = worst
  }
  return amount
}

/** When a provider reports no usage: the gateway's own count of what it received. */
function estimatedUsage(inputTokens: number, completion: Record<string, unknown>): Usage {
  const choices = Array.isArray(completion.choices) ? completion.choices : []
  const outputTokens = choices.reduce((total: number, choice) => total + estimateValueTokens(isRecord(choice) ? choice.message : undefined), 0)
  return { inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, webSearchRequests: 0 }
}
