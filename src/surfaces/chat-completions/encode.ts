import type { Answer } from '../../canonical/answer'
import { randomToken } from '../../util/ids'
import type { ChatCompletionObject } from '../../wire/chat-completions/completion'
import { chatToolCallOf } from '../../wire/chat-completions/content'
import { chatFinishReason } from '../../wire/chat-completions/finish-reason'
import { chatUsageOf } from '../../wire/chat-completions/usage'

/** A canonical answer as a chat.completion object (https://platform.openai.com/docs/api-reference/chat/object). */
export function encodeChatCompletion(answer: Answer, model: string, cost: number, created = Math.floor(Date.now() / 1000)): ChatCompletionObject {
  const text = answer.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('')
  const reasoning = answer.content.flatMap((part) => (part.type === 'reasoning' ? [part.text] : [])).join('')
  const calls = answer.content.flatMap((part) => (part.type === 'tool-call' ? [chatToolCallOf(part)] : []))
  return {
    id: completionId(),
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || null,
          ...(reasoning ? { reasoning_content: reasoning } : {}),
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
          refusal: null,
        },
        logprobs: null,
        finish_reason: chatFinishReason(answer.finishReason),
      },
    ],
    usage: chatUsageOf(answer.usage, cost),
  }
}

/** An id in the chat format's own style: the answer does not reveal which route served it. */
export function completionId(): string {
  return `chatcmpl-${randomToken(24)}`
}
