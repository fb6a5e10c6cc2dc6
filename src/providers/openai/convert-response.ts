import type { Answer, FinishReason } from '../../spec/answer'
import type { ToolCallPart } from '../../spec/prompt'
import { parseToolArguments } from '../../spec/tool-arguments'
import { NO_USAGE } from '../../spec/usage'
import { convertChatUsage } from './convert-usage'

/** OpenAI's finish reasons in the canonical vocabulary. */
export function finishReasonOf(reason: unknown): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop'
    case 'length':
      return 'length'
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls'
    case 'content_filter':
      return 'content-filter'
    default:
      return 'other'
  }
}

/** A chat completion (the first choice) as a canonical answer. */
export function convertChatAnswer(body: unknown): Answer {
  const completion = (body ?? {}) as { id?: string; choices?: { message?: Record<string, unknown>; finish_reason?: unknown }[]; usage?: unknown }
  const choice = completion.choices?.[0]
  const message = choice?.message ?? {}
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as { id?: string; function?: { name?: string; arguments?: string } }[]) : []
  return {
    id: completion.id ?? 'chatcmpl',
    content: [
      ...(typeof message.reasoning_content === 'string' && message.reasoning_content ? [{ type: 'reasoning' as const, text: message.reasoning_content }] : []),
      ...(typeof message.content === 'string' && message.content ? [{ type: 'text' as const, text: message.content }] : []),
      ...calls.map((call): ToolCallPart => ({ type: 'tool-call', id: call.id ?? '', name: call.function?.name ?? '', input: parseToolArguments(call.function?.arguments ?? '') })),
    ],
    finishReason: finishReasonOf(choice?.finish_reason),
    usage: convertChatUsage(completion.usage) ?? NO_USAGE,
  }
}
