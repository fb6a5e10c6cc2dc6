import type { Caller } from '../../auth/authenticate'
import { estimateChatInputTokens } from '../../billing/estimator'
import { worstCaseForTokens } from '../../billing/pricing'
import type { Prompt } from '../../canonical/prompt'
import { estimatedUsage } from '../../canonical/usage'
import { type ResolvedModel, requireModelType, resolveModel } from '../../catalog/resolve-model'
import type { ConversationEncoding, Surface } from '../../dispatch/surface'
import { ModelNotSupportedError } from '../../errors/kinds'
import { requireCount } from '../../http/request-bounds'
import type { MessagesCapability, MessagesPassthrough } from '../../providers/adapter'
import type { Services } from '../../services/services'
import { usageWithCost } from '../../streaming/upstream-json'
import { maxOutputTokensOf, requireOutputTokens } from '../output-tokens'
import { type ConversationRoute, conversationRoute, translatedEncoding } from '../routes'
import { decodeMessagesRequest } from './decode'
import { encodeMessage } from './encode'
import { MessageStreamEncoder } from './encode-stream'
import { observeMessagesStream } from './observe-native'
import type { CountTokensBody, MessagesBody } from './schema'

type MessagesRoute = ConversationRoute<MessagesCapability>

/** Searches a web search tool may make when it sets no `max_uses`: what the hold assumes. */
export const DEFAULT_WEB_SEARCH_USES = 10

/**
 * The most searches one web search tool may ask for. Anthropic documents no limit, but every
 * search adds its results (thousands of tokens) to the conversation, so a request runs out of
 * context long before a hundred searches; the cap keeps the hold (`max_uses` × the search
 * price) a real bound rather than whatever a client writes.
 */
const MAX_WEB_SEARCH_USES = 100

/**
 * POST /v1/messages. Native routes get the body as it is (unknown fields, thinking signatures,
 * cache_control and server tools included; the provider drops only the options that would
 * raise its price above the catalogue's); other routes get it translated through the canonical
 * prompt. Either way the answer has the same shape and names the model the client asked for:
 * the answer never reveals the route.
 */
export const messages: Surface<MessagesBody, MessagesRoute> = {
  async plan(services, { caller, body: request, headers, query }) {
    const resolved = await resolveMessagesModel(services, caller, request.model)
    const { model } = resolved
    return {
      model: resolved,
      usable: (route) => conversationRoute(route, route.adapter.messages),
      call(routes) {
        const maxTokens = requireOutputTokens(request.max_tokens, 'max_tokens', maxOutputTokensOf(model), request.model)
        const searches = webSearchAllowance(request.tools)
        const prompt: Prompt | undefined = routes.some((route) => route.mode === 'translated') ? decodeMessagesRequest(request) : undefined
        const inputTokens = estimateMessagesInputTokens(request)
        const passthrough: MessagesPassthrough = { version: headers.get('anthropic-version'), beta: headers.get('anthropic-beta'), query }
        return {
          kind: 'conversation',
          modelId: model.id,
          routes,
          holdAmount: worstCaseForTokens(model.pricing, inputTokens, maxTokens, searches),
          outputCap: { param: 'max_tokens', tokens: maxTokens, given: true },
          send: (route, target) =>
            route.mode === 'native' ? route.native.send(target, request, passthrough) : route.translate.send(target, prompt ?? decodeMessagesRequest(request)),
          encoding: (route) => messagesEncoding(route, request.model, inputTokens, maxTokens, request.stream === true),
        }
      },
    }
  },
}

function messagesEncoding(route: MessagesRoute, shownModel: string, inputTokens: number, outputTokenLimit: number, streaming: boolean): ConversationEncoding {
  const shape = { streaming, inputTokens, outputTokenLimit }
  if (route.mode === 'translated') {
    return translatedEncoding(route, shape, {
      encodeAnswer: (answer, cost) => encodeMessage(answer, shownModel, cost),
      encodeStream: () => new MessageStreamEncoder(shownModel, inputTokens),
    })
  }
  const usageOf = route.native.usage
  return {
    ...shape,
    mode: 'native',
    nativeUsage: (message) => usageOf(message.usage),
    estimateNative: () => estimatedUsage(inputTokens, 0),
    presentNative: (message, cost) => ({ ...message, model: shownModel, usage: usageWithCost(message.usage, cost) }),
    observeNative: () => observeMessagesStream({ shownModel, inputTokens, usageOf }),
  }
}

/** The estimate holds use, and POST /v1/messages/count_tokens answers. */
export function estimateMessagesInputTokens(body: CountTokensBody): number {
  return estimateChatInputTokens({ messages: body.messages, system: body.system, tools: body.tools })
}

/**
 * Searches the request's web search tools may make: each one's `max_uses` (a whole number up to
 * MAX_WEB_SEARCH_USES, else 400 naming `tools[i].max_uses`), or the default when it sets none.
 */
function webSearchAllowance(tools: MessagesBody['tools']): number {
  return (tools ?? []).reduce((total: number, tool, index) => {
    if (typeof tool.type !== 'string' || !tool.type.startsWith('web_search')) return total
    // null is how SDKs built from the API's types write "not set".
    if (tool.max_uses === undefined || tool.max_uses === null) return total + DEFAULT_WEB_SEARCH_USES
    return (
      total +
      requireCount(tool.max_uses, `tools[${index}].max_uses`, MAX_WEB_SEARCH_USES, 'the most searches one web search tool may make through this gateway')
    )
  }, 0)
}

/** The vendor whose models form the messages-format family: the only ones /v1/messages serves. */
const MESSAGES_VENDOR = 'anthropic'

/**
 * The catalogue model a /v1/messages request names (docs/api.md#messages): a bare name, as Claude Code
 * sends it, means `anthropic/<name>`; aliases, custom models and other vendors' models belong to
 * chat completions and are refused with 400 model_not_supported.
 */
export async function resolveMessagesModel(
  services: Pick<Services, 'catalog' | 'customModels'>,
  caller: Caller,
  requested: string,
): Promise<ResolvedModel & { kind: 'model' }> {
  const id = requested.includes('/') ? requested : `${MESSAGES_VENDOR}/${requested}`
  if (!id.startsWith(`${MESSAGES_VENDOR}/`)) {
    throw new ModelNotSupportedError(`'${requested}' is not a messages-format model; call it through /v1/chat/completions.`, { param: 'model' })
  }
  const resolved = await resolveModel(services, caller, id)
  if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${requested}' is served by /v1/chat/completions only.`, { param: 'model' })
  requireModelType(resolved, 'chat', '/v1/messages')
  return resolved
}
