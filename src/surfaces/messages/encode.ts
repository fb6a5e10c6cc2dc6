import type { Answer, FinishReason } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import { randomToken } from '../../util/ids'

/** Canonical finish reasons as messages-format stop reasons (https://docs.claude.com/en/api/messages). */
export function stopReasonOf(reason: FinishReason): string {
  switch (reason) {
    case 'length':
      return 'max_tokens'
    case 'stop-sequence':
      return 'stop_sequence'
    case 'tool-calls':
      return 'tool_use'
    case 'content-filter':
      return 'refusal'
    default:
      return 'end_turn'
  }
}

export function messagesUsageOf(usage: Usage): Record<string, number> {
  return {
    input_tokens: usage.inputTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cacheReadTokens,
    output_tokens: usage.outputTokens,
  }
}

/** A canonical answer as a messages-format message object. */
export function encodeMessage(answer: Answer, model: string, cost: number): Record<string, unknown> {
  return {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model,
    content: answer.content.map((part) => {
      if (part.type === 'text') return { type: 'text', text: part.text }
      if (part.type === 'reasoning') return { type: 'thinking', thinking: part.text, signature: part.signature ?? '' }
      return { type: 'tool_use', id: part.id, name: part.name, input: part.input }
    }),
    stop_reason: stopReasonOf(answer.finishReason),
    stop_sequence: answer.stopSequence ?? null,
    usage: { ...messagesUsageOf(answer.usage), cost },
  }
}

/** An id in the messages format's own style: the answer does not reveal which route served it. */
export function messageId(): string {
  return `msg_${randomToken(24)}`
}
