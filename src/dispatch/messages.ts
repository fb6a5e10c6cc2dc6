import type { Caller } from '../auth/authenticate'
import { estimateChatInputTokens } from '../billing/estimator'
import { worstCaseForTokens } from '../billing/pricing'
import { UpstreamError } from '../errors/kinds'
import type { MessagesPassthrough } from '../providers/adapter'
import type { Services } from '../services'
import { BilledCall } from './billed-call'
import { firstAnswer } from './failover'
import { resolveMessagesModel } from './messages-model'
import { relayMessagesStream } from './messages-stream'
import { planRoutes } from './route-plan'

/** Searches a web search tool may make when it sets no `max_uses`: what the hold assumes. */
export const DEFAULT_WEB_SEARCH_USES = 10

export type MessagesBody = Record<string, unknown> & { model: string; max_tokens: number; messages: unknown[] }

/**
 * POST /v1/messages, billed, on routes that speak the messages format natively: the body
 * passes through (unknown fields, thinking signatures, cache_control and server tools
 * included), only a `speed` other than standard is dropped (API.md §4.2 rule 3).
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
  const { speed, ...rest } = request
  const body = speed === undefined || speed === 'standard' ? request : rest
  const options = planRoutes(services, { kind: 'model', model }, 'sendMessages')
  const inputTokens = estimateMessagesInputTokens(body)
  const amount = worstCaseForTokens(model.pricing, inputTokens, request.max_tokens, webSearchAllowance(body.tools))
  const call = await BilledCall.open(services, caller, amount, requestId, model.id, options[0]!.provider.name)

  let answer: Awaited<ReturnType<typeof firstAnswer<(typeof options)[number]>>>
  try {
    answer = await firstAnswer(
      options,
      (option, signal) => option.adapter.sendMessages({ provider: option.provider, model: option.upstreamModel, signal }, body, passthrough),
      (option, status, text) => option.adapter.mapError(status, text),
      clientSignal,
    )
  } catch (error) {
    await call.release()
    throw error
  }
  const { option } = answer
  if (body.stream === true) {
    return relayMessagesStream({
      upstream: answer.response,
      abortUpstream: answer.abort,
      call,
      model: option.model,
      route: option.provider.name,
      adapter: option.adapter,
      inputTokens,
      shownModel: request.model,
    })
  }

  let message: Record<string, unknown>
  try {
    message = (await answer.response.json()) as Record<string, unknown>
  } catch (error) {
    await call.release()
    throw new UpstreamError('The upstream answered with a body that is not JSON.', { cause: error })
  }
  const usage = option.adapter.messagesUsage?.(message.usage)
  const settled = await call.settle(option.model, option.provider.name, usage ?? { inputTokens, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, webSearchRequests: 0 }, usage ? 'provider' : 'estimate')
  const reported = typeof message.usage === 'object' && message.usage !== null ? message.usage : {}
  // The model the client named, whichever route served: the answer never reveals the route.
  return Response.json({ ...message, model: request.model, usage: { ...reported, cost: settled.cost } })
}

/** The estimate holds use, and POST /v1/messages/count_tokens answers. */
export function estimateMessagesInputTokens(body: Record<string, unknown>): number {
  return estimateChatInputTokens({ messages: body.messages, system: body.system, tools: body.tools })
}

/** Searches the request's web search tools may make: their `max_uses`, or the default each. */
function webSearchAllowance(tools: unknown): number {
  if (!Array.isArray(tools)) return 0
  return tools.reduce((total: number, tool) => {
    if (!tool || typeof tool !== 'object' || typeof (tool as { type?: unknown }).type !== 'string') return total
    const { type, max_uses: maxUses } = tool as { type: string; max_uses?: unknown }
    if (!type.startsWith('web_search')) return total
    return total + (typeof maxUses === 'number' && maxUses > 0 ? maxUses : DEFAULT_WEB_SEARCH_USES)
  }, 0)
}
