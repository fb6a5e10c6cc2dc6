import type { Answer } from '../../canonical/answer'
import type { ReasoningPart, TextPart } from '../../canonical/prompt'
import { NO_USAGE } from '../../canonical/usage'
import { ChatCompletion } from '../../wire/chat-completions/completion'
import { toolCallPartOf } from '../../wire/chat-completions/content'
import { finishReasonOf } from '../../wire/chat-completions/finish-reason'
import { usageFromChat } from '../../wire/chat-completions/usage'
import { decodeWire } from '../../wire/decode'

/** A chat completion (the first choice) as a canonical answer; UpstreamError when it is not one. */
export function convertChatAnswer(body: unknown): Answer {
  const completion = decodeWire(ChatCompletion, body, 'chat completion')
  const [choice] = completion.choices
  const message = choice?.message
  const reasoning: ReasoningPart[] = message?.reasoning_content ? [{ type: 'reasoning', text: message.reasoning_content }] : []
  const text: TextPart[] = message?.content ? [{ type: 'text', text: message.content }] : []
  const calls = (message?.tool_calls ?? []).map(toolCallPartOf)
  return {
    id: completion.id ?? 'chatcmpl',
    content: [...reasoning, ...text, ...calls],
    finishReason: finishReasonOf(choice?.finish_reason),
    usage: usageFromChat(completion.usage) ?? NO_USAGE,
  }
}
