import type { Answer, FinishReason } from '../../canonical/answer'
import type { ReasoningPart, TextPart, ToolCallPart } from '../../canonical/prompt'
import { NO_USAGE } from '../../canonical/usage'
import { decodeWire } from '../decode'
import { Message, TextBlock, ThinkingBlock, ToolUseBlock } from './api'
import { convertMessagesUsage } from './convert-usage'

/** Anthropic stop reasons in the canonical vocabulary. */
export function finishReasonOf(reason: string | null | undefined): FinishReason {
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

/**
 * A message object as a canonical answer; UpstreamError when it is not one. Server tool blocks
 * have no canonical form and are left out.
 */
export function convertMessageAnswer(body: unknown): Answer {
  const message = decodeWire(Message, body, 'message')
  return {
    id: message.id ?? 'msg',
    content: message.content.flatMap((block, index): (TextPart | ReasoningPart | ToolCallPart)[] => {
      const what = `message content block ${index}`
      switch (block.type) {
        case 'text':
          return [{ type: 'text', text: decodeWire(TextBlock, block, what).text }]
        case 'thinking': {
          const thinking = decodeWire(ThinkingBlock, block, what)
          return [{ type: 'reasoning', text: thinking.thinking, ...(thinking.signature !== undefined ? { signature: thinking.signature } : {}) }]
        }
        case 'tool_use': {
          const call = decodeWire(ToolUseBlock, block, what)
          return [{ type: 'tool-call', id: call.id, name: call.name, input: call.input ?? {} }]
        }
        default:
          return []
      }
    }),
    finishReason: finishReasonOf(message.stop_reason),
    ...(typeof message.stop_sequence === 'string' ? { stopSequence: message.stop_sequence } : {}),
    usage: convertMessagesUsage(message.usage) ?? NO_USAGE,
  }
}
