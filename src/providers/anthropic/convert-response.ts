import type { Answer } from '../../canonical/answer'
import { NO_USAGE } from '../../canonical/usage'
import { decodeWire } from '../../wire/decode'
import { assistantPartOf } from '../../wire/messages/content'
import { type AssistantBlock, Message, TextBlock, ThinkingBlock, ToolUseBlock } from '../../wire/messages/message'
import { finishReasonOf } from '../../wire/messages/stop-reason'
import { usageFromMessages } from '../../wire/messages/usage'

/**
 * A message object as a canonical answer; UpstreamError when it is not one. Server tool blocks
 * have no canonical form and are left out.
 */
export function convertMessageAnswer(body: unknown): Answer {
  const message = decodeWire(Message, body, 'message')
  return {
    id: message.id ?? 'msg',
    content: message.content.flatMap((block, index) => {
      const read = assistantBlockIn(block, `message content block ${index}`)
      return read ? [assistantPartOf(read)] : []
    }),
    finishReason: finishReasonOf(message.stop_reason),
    ...(typeof message.stop_sequence === 'string' ? { stopSequence: message.stop_sequence } : {}),
    usage: usageFromMessages(message.usage) ?? NO_USAGE,
  }
}

/** A block with a canonical form, checked against its schema; undefined for any other kind. */
function assistantBlockIn(block: { type: string }, what: string): AssistantBlock | undefined {
  switch (block.type) {
    case 'text':
      return decodeWire(TextBlock, block, what)
    case 'thinking':
      return decodeWire(ThinkingBlock, block, what)
    case 'tool_use':
      return decodeWire(ToolUseBlock, block, what)
    default:
      return undefined
  }
}
