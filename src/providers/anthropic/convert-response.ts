import type { Answer, FinishReason } from '../../spec/answer'
import type { ReasoningPart, TextPart, ToolCallPart } from '../../spec/prompt'
import { NO_USAGE } from '../../spec/usage'
import { convertMessagesUsage } from './convert-usage'

/** Anthropic stop reasons in the canonical vocabulary. */
export function finishReasonOf(reason: unknown): FinishReason {
  switch (reason) {
    case 'end_turn':
      return 'stop'
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length'
    case 'stop_sequence':
      return 'stop-sequence'
    case 'tool_use':
      return 'tool-calls'
    case 'refusal':
      return 'content-filter'
    default:
      return 'other'
  }
}

/** A message object as a canonical answer; server tool blocks have no canonical form and are left out. */
export function convertMessageAnswer(body: unknown): Answer {
  const message = (body ?? {}) as { id?: string; content?: Record<string, unknown>[]; stop_reason?: unknown; stop_sequence?: unknown; usage?: unknown }
  return {
    id: message.id ?? 'msg',
    content: (message.content ?? []).flatMap((block): (TextPart | ReasoningPart | ToolCallPart)[] => {
      if (block.type === 'text' && typeof block.text === 'string') return [{ type: 'text', text: block.text }]
      if (block.type === 'thinking' && typeof block.thinking === 'string') {
        return [{ type: 'reasoning', text: block.thinking, ...(typeof block.signature === 'string' ? { signature: block.signature } : {}) }]
      }
      if (block.type === 'tool_use') return [{ type: 'tool-call', id: String(block.id), name: String(block.name), input: block.input ?? {} }]
      return []
    }),
    finishReason: finishReasonOf(message.stop_reason),
    ...(typeof message.stop_sequence === 'string' ? { stopSequence: message.stop_sequence } : {}),
    usage: convertMessagesUsage(message.usage) ?? NO_USAGE,
  }
}
