import type { Caller } from '../auth/authenticate'
import { estimateChatInputTokens, estimateValueTokens } from '../billing/estimator'
import { worstCaseForTokens } from '../billing/pricing'
import { requireModelType, resolveModel, type ResolvedModel } from '../catalog/resolve-model'
import type { UpstreamTarget } from '../providers/adapter'
import { decodeChatRequest } from '../routes/openai/decode-chat'
import { encodeChatCompletion } from '../routes/openai/encode-chat'
import { ChatStreamEncoder } from '../routes/openai/encode-chat-stream'
import type { Services } from '../services'
import type { Usage } from '../spec/usage'
import { BilledCall } from './billed-call'
import { relayChatStream } from './chat-stream'
import { deliver, withCost } from './deliver'
import { planRoutes, translatedRoute, type Route, type TranslatedRoute } from './route-plan'

/** A route for chat completions: the body as it is where the API speaks OpenAI's format, else a translation. */
type ChatRoute = (Route & { mode: 'native'; send: (target: UpstreamTarget, body: Record<string, unknown>) => Promise<Response> }) | TranslatedRoute

function chatRoute(route: Route): ChatRoute | undefined {
  const send = route.adapter.sendChatCompletion
  return send ? { ...route, mode: 'native', send } : translatedRoute(route)
}

/** Output allowance for a model whose config names no maximum. */
const DEFAULT_MAX_OUTPUT_TOKENS = 32_768

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
  const prompt = options.some((option) => option.mode === 'translated') ? decodeChatRequest(body) : undefined
  const inputTokens = estimateChatInputTokens(body)
  const call = await BilledCall.open(services, caller, holdAmount(options, body, inputTokens), requestId, request.model, options[0]!.provider.name)

  const streaming = body.stream === true
  const clientWantsUsage = streaming && isRecord(body.stream_options) && body.stream_options.include_usage === true
  // Usage is always asked for: billing needs it whether or not the client shows it.
  const sent = streaming ? { ...body, stream_options: { ...(isRecord(body.stream_options) ? body.stream_options : {}), include_usage: true } } : body

  const answer = await call.reach(options, (option, target) => (option.mode === 'native' ? option.send(target, sent) : option.send(target, prompt!)), clientSignal)
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

/** The dearest worst case among the routes that may serve: failover must never outrun the hold. */
function holdAmount(options: Route[], body: ChatBody, inputTokens: number): bigint {
  const requested = numberField(body.max_completion_tokens) ?? numberField(body.max_tokens)
  const choices = numberField(body.n) ?? 1
  let amount = 0n
  for (const { model } of options) {
    const maxOutput = (requested ?? model.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS) * choices
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

function numberField(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
