import type { Answer, FinishReason } from '../../canonical/answer'
import type { ReasoningPart, TextPart, ToolCallPart } from '../../canonical/prompt'
import { parseToolArguments } from '../../canonical/tool-arguments'
import { NO_USAGE } from '../../canonical/usage'
import { decodeWire } from '../../wire/decode'
import { ChatCompletion } from './api'
import { convertChatUsage } from './convert-usage'

/** OpenAI's finish reasons in the canonical vocabulary. */
export function finishReasonOf(reason: string | null | undefined): FinishReason {
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

/** A chat completion (the first choice) as a canonical answer; UpstreamError when it is not one. */
export function convertChatAnswer(body: unknown): Answer {
  const completion = decodeWire(ChatCompletion, body, 'chat completion')
  const [choice] = completion.choices
  const message = choice?.message
  const reasoning: ReasoningPart[] = message?.reasoning_content ? [{ type: 'reasoning', text: message.reasoning_content }] : []
  const text: TextPart[] = message?.content ? [{ type: 'text', text: message.content }] : []
  const calls = (message?.tool_calls ?? []).map(
    (call): ToolCallPart => ({ type: 'tool-call', id: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments) }),
  )
  return {
    id: completion.id ?? 'chatcmpl',
    content: [...reasoning, ...text, ...calls],
    finishReason: finishReasonOf(choice?.finish_reason),
    usage: convertChatUsage(completion.usage) ?? NO_USAGE,
  }
}
