import type { Caller } from '../auth/authenticate'
import { estimateChatInputTokens } from '../billing/estimator'
import { worstCaseForTokens } from '../billing/pricing'
import { requireCount } from '../http/request-bounds'
import type { MessagesPassthrough, UpstreamTarget } from '../providers/adapter'
import { decodeMessagesRequest } from '../routes/anthropic/decode-messages'
import { encodeMessage } from '../routes/anthropic/encode-message'
import { MessageStreamEncoder } from '../routes/anthropic/encode-message-stream'
import type { Services } from '../services'
import { BilledCall } from './billed-call'
import { resolveMessagesModel } from './messages-model'
import { relayMessagesStream } from './messages-stream'
import { planRoutes, translatedRoute, type Route, type TranslatedRoute } from './route-plan'
import { deliver, withCost } from './deliver'
import { maxOutputTokensOf, requireOutputTokens } from './output-tokens'

/** Searches a web search tool may make when it sets no `max_uses`: what the hold assumes. */
export const DEFAULT_WEB_SEARCH_USES = 10

/**
 * The most searches one web search tool may ask for. Anthropic documents no limit, but every
 * search adds its results (thousands of tokens) to the conversation, so a request runs out of
 * context long before a hundred searches; the cap keeps the hold (`max_uses` × the search
 * price) a real bound rather than whatever a client writes.
 */
const MAX_WEB_SEARCH_USES = 100

export type MessagesBody = Record<string, unknown> & { model: string; max_tokens: number; messages: unknown[] }

/** A route for /v1/messages: the body as it is where the API speaks messages, else a translation. */
type MessagesRoute = (Route & { mode: 'native'; send: (target: UpstreamTarget, body: Record<string, unknown>, passthrough: MessagesPassthrough) => Promise<Response> }) | TranslatedRoute

function messagesRoute(route: Route): MessagesRoute | undefined {
  const send = route.adapter.sendMessages
  return send ? { ...route, mode: 'native', send } : translatedRoute(route)
}

/**
 * POST /v1/messages, billed. Native routes get the body as it is (unknown fields, thinking
 * signatures, cache_control and server tools included; the provider drops only the options that
 * would raise its price above the catalogue's, such as a `speed` other than standard); other
 * routes get it translated through the canonical prompt. Either way the answer has the same
 * shape and names the model the client asked for.
 */
export async function createMessage(
  services: Services,
  caller: Caller,
  request: MessagesBody,
  passthrough: MessagesPassthrough,
  requestId: string,
  clientSignal: AbortSignal,
): Promise<Response> {
  const { model } = await resolveMessagesModel(services, caller, request.model)
  const options = planRoutes(services, { kind: 'model', model }, messagesRoute)
  const maxTokens = requireOutputTokens(request.max_tokens, 'max_tokens', maxOutputTokensOf(model), request.model)
  const searches = webSearchAllowance(request.tools)
  const prompt = options.some((option) => option.mode === 'translated') ? decodeMessagesRequest(request) : undefined
  const inputTokens = estimateMessagesInputTokens(request)
  const amount = worstCaseForTokens(model.pricing, inputTokens, maxTokens, searches)
  const call = await BilledCall.open(services, caller, amount, requestId, model.id, options[0]!.provider.name)

  const answer = await call.reach(options, (option, target) => (option.mode === 'native' ? option.send(target, request, passthrough) : option.send(target, prompt!)), clientSignal)
  return deliver(call, answer, inputTokens, {
    streaming: request.stream === true,
    relayNative: (params) => relayMessagesStream({ ...params, shownModel: request.model }),
    nativeUsage: (message) => answer.option.adapter.messagesUsage?.(message.usage),
    // The model the client named, whichever route served: the answer never reveals the route.
    presentNative: (message, cost) => ({ ...message, model: request.model, usage: withCost(message.usage, cost) }),
    streamEncoder: () => new MessageStreamEncoder(request.model, inputTokens),
    encodeAnswer: (translated, cost) => encodeMessage(translated, request.model, cost),
  })
}

/** The estimate holds use, and POST /v1/messages/count_tokens answers. */
export function estimateMessagesInputTokens(body: Record<string, unknown>): number {
  return estimateChatInputTokens({ messages: body.messages, system: body.system, tools: body.tools })
}

/**
 * Searches the request's web search tools may make: each one's `max_uses` (a whole number up to
 * MAX_WEB_SEARCH_USES, else 400 naming `tools[i].max_uses`), or the default when it sets none.
 */
function webSearchAllowance(tools: unknown): number {
  if (!Array.isArray(tools)) return 0
  return tools.reduce((total: number, tool: unknown, index: number) => {
    if (!tool || typeof tool !== 'object' || typeof (tool as { type?: unknown }).type !== 'string') return total
    const { type, max_uses: maxUses } = tool as { type: string; max_uses?: unknown }
    if (!type.startsWith('web_search')) return total
    // null is how SDKs built from the API's types write "not set".
    if (maxUses === undefined || maxUses === null) return total + DEFAULT_WEB_SEARCH_USES
    return total + requireCount(maxUses, `tools[${index}].max_uses`, MAX_WEB_SEARCH_USES, 'the most searches one web search tool may make through this gateway')
  }, 0)
}
