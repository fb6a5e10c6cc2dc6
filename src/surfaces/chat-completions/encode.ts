import type { Answer, FinishReason } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import { randomToken } from '../../util/ids'

/** Canonical finish reasons as chat completions finish reasons. */
export function chatFinishReason(reason: FinishReason): string {
  switch (reason) {
    case 'length':
      return 'length'
    case 'tool-calls':
      return 'tool_calls'
    case 'content-filter':
      return 'content_filter'
    default:
      return 'stop'
  }
}

/** OpenAI counts cached input inside prompt_tokens and shows it in prompt_tokens_details. */
export function chatUsageOf(usage: Usage, cost: number): Record<string, unknown> {
  const prompt = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.outputTokens,
    total_tokens: prompt + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cacheReadTokens },
    cost,
  }
}

/** A canonical answer as a chat.completion object (https://platform.openai.com/docs/api-reference/chat/object). */
export function encodeChatCompletion(answer: Answer, model: string, cost: number, created = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  const text = answer.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('')
  const reasoning = answer.content.flatMap((part) => (part.type === 'reasoning' ? [part.text] : [])).join('')
  const calls = answer.content.flatMap((part) =>
    part.type === 'tool-call' ? [{ id: part.id, type: 'function', function: { name: part.name, arguments: JSON.stringify(part.input ?? {}) } }] : [],
  )
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
