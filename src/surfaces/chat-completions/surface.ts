import { estimateChatInputTokens, estimateValueTokens } from '../../billing/estimator'
import { worstCaseForTokens } from '../../billing/pricing'
import type { Prompt } from '../../canonical/prompt'
import { estimatedUsage } from '../../canonical/usage'
import type { ModelEntry } from '../../catalog/catalog-schema'
import { type ResolvedModel, requireModelType, resolveModel } from '../../catalog/resolve-model'
import type { ConversationEncoding, NonEmpty, Route, Surface } from '../../dispatch/surface'
import { InvalidRequestError } from '../../errors/kinds'
import { requireCount } from '../../http/request-bounds'
import type { ChatCapability } from '../../providers/adapter'
import { usageWithCost } from '../../streaming/upstream-json'
import { maxOutputTokensOf, outputAllowanceOf, requireOutputTokens } from '../output-tokens'
import { type ConversationRoute, conversationRoute, translatedEncoding } from '../routes'
import { decodeChatRequest } from './decode'
import { encodeChatCompletion } from './encode'
import { ChatStreamEncoder } from './encode-stream'
import { observeChatStream } from './observe-native'
import { type ChatCompletionBody, MAX_CHOICES } from './schema'

type ChatRoute = ConversationRoute<ChatCapability>

/** A chat request's output-token fields; OpenAI reads max_completion_tokens first when both are sent. */
const OUTPUT_TOKEN_FIELDS = ['max_completion_tokens', 'max_tokens'] as const

/**
 * POST /v1/chat/completions. OpenAI-format routes get the body as it is (usage always asked for
 * on streams: billing needs it whether or not the client shows it); others get it translated
 * through the canonical prompt, and the answer translated back. Aliases and custom models are
 * served here only.
 */
export const chatCompletions: Surface<ChatCompletionBody, ChatRoute> = {
  async plan(services, { caller, body: request }) {
    checkMessages(request.messages)
    const resolved = await resolveModel(services, caller, request.model)
    requireModelType(resolved, 'chat', '/v1/chat/completions')
    const body = withCustomModel(resolved, request)
    return {
      model: resolved,
      usable: (route) => conversationRoute(route, route.adapter.chat),
      call(routes) {
        const limits = checkLimits(body, routes, request.model)
        // Decoded before the hold when a route may need it; native calls never do.
        const prompt: Prompt | undefined = routes.some((route) => route.mode === 'translated') ? decodeChatRequest(body) : undefined
        const inputTokens = estimateChatInputTokens(body)
        const streaming = body.stream === true
        const clientWantsUsage = streaming && body.stream_options?.include_usage === true
        const sent: ChatCompletionBody = streaming ? { ...body, stream_options: { ...body.stream_options, include_usage: true } } : body
        return {
          kind: 'conversation',
          modelId: request.model,
          routes,
          holdAmount: holdAmount(routes, limits, inputTokens),
          outputCap: {
            param: body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens',
            tokens: Math.max(...routes.map((route) => routeOutputTokens(route.model, limits.requested))),
            given: limits.requested !== undefined,
          },
          // Omitted, max_tokens is the model's maximum, and every route is told it (the hold was sized
          // for it), so none falls back on a default of its own.
          send: (route, target) =>
            route.mode === 'native'
              ? route.native.send(target, withinModelMaximum(sent, route.model), routeOutputTokens(route.model, limits.requested))
              : route.translate.send(target, { ...(prompt ?? decodeChatRequest(body)), maxOutputTokens: routeOutputTokens(route.model, limits.requested) }),
          encoding: (route) => chatEncoding(route, inputTokens, streaming, clientWantsUsage, routeOutputTokens(route.model, limits.requested) * limits.choices),
        }
      },
    }
  },
}

/** How chat answers reach the client: the completion shows the catalogue model that served it. */
function chatEncoding(route: ChatRoute, inputTokens: number, streaming: boolean, clientWantsUsage: boolean, outputTokenLimit: number): ConversationEncoding {
  const shownModel = route.model.id
  const shape = { streaming, inputTokens, outputTokenLimit }
  if (route.mode === 'translated') {
    return translatedEncoding(route, shape, {
      encodeAnswer: (answer, cost) => encodeChatCompletion(answer, shownModel, cost),
      encodeStream: () => new ChatStreamEncoder(shownModel, clientWantsUsage),
    })
  }
  const usageOf = route.native.usage
  return {
    ...shape,
    mode: 'native',
    nativeUsage: (completion) => usageOf(completion.usage),
    estimateNative: (completion) => estimatedUsage(inputTokens, choicesTokens(completion.choices)),
    presentNative: (completion, cost) => ({ ...completion, model: shownModel, usage: usageWithCost(completion.usage, cost) }),
    observeNative: () => observeChatStream({ shownModel, inputTokens, clientWantsUsage, usageOf }),
  }
}

/**
 * A message may go without content (absent or null) only when it is an assistant turn that
 * called tools (OpenAI's rule), checked here so a translated route never receives an empty turn
 * the upstream would refuse with an error of its own.
 */
function checkMessages(messages: ChatCompletionBody['messages']): void {
  messages.forEach((message, index) => {
    if (message.content !== undefined && message.content !== null) return
    if (message.role === 'assistant' && 'tool_calls' in message && Array.isArray(message.tool_calls)) return
    const param = `messages[${index}].content`
    throw new InvalidRequestError(message.content === null ? `${param} may be null only on an assistant message with tool_calls.` : `${param} is required.`, {
      param,
    })
  })
}

/** A custom model's defaults fill what the request left out; its system prompt goes first. */
function withCustomModel(resolved: ResolvedModel, request: ChatCompletionBody): ChatCompletionBody {
  if (resolved.kind !== 'custom') return request
  const { custom } = resolved
  const messages = custom.system ? [{ role: 'system', content: custom.system }, ...request.messages] : request.messages
  return { ...custom.defaults, ...request, messages }
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
function checkLimits(body: ChatCompletionBody, routes: NonEmpty<Route>, modelName: string): ChatLimits {
  const choices = body.n === undefined ? 1 : requireCount(body.n, 'n', MAX_CHOICES, 'the most choices one request may ask for')
  const maximum = Math.max(...routes.map((route) => maxOutputTokensOf(route.model)))
  const [completionTokens, tokens] = OUTPUT_TOKEN_FIELDS.map((field) =>
    body[field] === undefined ? undefined : requireOutputTokens(body[field], field, maximum, modelName),
  )
  return { requested: completionTokens ?? tokens, choices }
}

/** The output tokens asked of one candidate model: the request's number within the model's maximum. */
function outputTokensFor(model: ModelEntry, requested: number | undefined): number | undefined {
  return requested === undefined ? undefined : Math.min(requested, maxOutputTokensOf(model))
}

/** What one candidate model is asked for and held for, per choice: the request's number within its maximum, else its maximum. */
function routeOutputTokens(model: ModelEntry, requested: number | undefined): number {
  return outputAllowanceOf(model, outputTokensFor(model, requested))
}

/** The body as one candidate model receives it: its output-token fields no larger than that model's maximum. */
function withinModelMaximum(body: ChatCompletionBody, model: ModelEntry): ChatCompletionBody {
  const maximum = maxOutputTokensOf(model)
  const over = OUTPUT_TOKEN_FIELDS.filter((field) => typeof body[field] === 'number' && body[field] > maximum)
  return over.length === 0 ? body : { ...body, ...Object.fromEntries(over.map((field) => [field, maximum])) }
}

/** The dearest worst case among the routes that may serve: failover must never outrun the hold. */
function holdAmount(routes: NonEmpty<Route>, limits: ChatLimits, inputTokens: number): bigint {
  let amount = 0n
  for (const { model } of routes) {
    const maxOutput = routeOutputTokens(model, limits.requested) * limits.choices
    const worst = worstCaseForTokens(model.pricing, inputTokens, maxOutput)
    if (worst > amount) amount = worst
  }
  return amount
}

/** When a provider reports no usage: the gateway's own count of the choices it received. */
function choicesTokens(choices: unknown): number {
  if (!Array.isArray(choices)) return 0
  return choices.reduce(
    (total: number, choice: unknown) =>
      total + estimateValueTokens(typeof choice === 'object' && choice !== null && 'message' in choice ? choice.message : undefined),
    0,
  )
}
