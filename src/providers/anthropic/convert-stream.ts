import type { FinishReason, StreamPart } from '../../canonical/answer'
import { UpstreamError } from '../../errors/kinds'
import type { SseEvent } from '../../streaming/sse'
import { decodeWire, parseWireJson } from '../../wire/decode'
import { ToolUseBlock } from '../../wire/messages/message'
import { finishReasonOf } from '../../wire/messages/stop-reason'
import {
  ContentBlockDeltaEvent,
  ContentBlockStartEvent,
  ErrorEvent,
  InputJsonDelta,
  MessageDeltaEvent,
  MessageStartEvent,
  SignatureDelta,
  StreamEvent,
  TextDelta,
  ThinkingDelta,
} from '../../wire/messages/stream'
import { type MessagesUsage, updateStreamUsage, usageFromMessages } from '../../wire/messages/usage'
import type { StreamTranslator } from '../adapter'

/**
 * A native messages stream (https://docs.claude.com/en/docs/build-with-claude/streaming) as
 * canonical parts. Usage starts in message_start and is completed, cumulatively, by
 * message_delta; `finish` goes out at message_stop. Events the gateway has no part for (ping,
 * content_block_stop, server tool blocks, citations) are passed over.
 */
export function convertMessagesStream(): StreamTranslator {
  return new MessagesStreamTranslator()
}

class MessagesStreamTranslator implements StreamTranslator {
  private readonly toolIds = new Map<number, string>()
  private usage: MessagesUsage = {}
  private finishReason: FinishReason = 'other'
  private stopSequence: string | undefined
  private finished = false

  event(event: SseEvent): StreamPart[] {
    // An event line with no data (a bare `event: ping`) carries nothing to read.
    if (this.finished || event.data === '') return []
    const data = parseWireJson(event.data, 'messages stream event')
    const type = decodeWire(StreamEvent, data, 'messages stream event').type ?? event.event
    const what = `${type} event`
    switch (type) {
      case 'message_start': {
        const { message } = decodeWire(MessageStartEvent, data, what)
        updateStreamUsage(this.usage, message.usage)
        return [{ type: 'start', id: message.id ?? 'msg' }]
      }
      case 'content_block_start': {
        const start = decodeWire(ContentBlockStartEvent, data, what)
        if (start.content_block.type !== 'tool_use') return []
        const call = decodeWire(ToolUseBlock, start.content_block, what)
        this.toolIds.set(start.index, call.id)
        return [{ type: 'tool-call-start', id: call.id, name: call.name }]
      }
      case 'content_block_delta': {
        const part = deltaPart(decodeWire(ContentBlockDeltaEvent, data, what), this.toolIds)
        return part ? [part] : []
      }
      case 'message_delta': {
        const delta = decodeWire(MessageDeltaEvent, data, what)
        updateStreamUsage(this.usage, delta.usage)
        this.finishReason = finishReasonOf(delta.delta.stop_reason)
        if (typeof delta.delta.stop_sequence === 'string') this.stopSequence = delta.delta.stop_sequence
        return []
      }
      case 'message_stop':
        this.finished = true
        return [
          {
            type: 'finish',
            finishReason: this.finishReason,
            ...(this.stopSequence ? { stopSequence: this.stopSequence } : {}),
            usage: usageFromMessages(this.usage),
          },
        ]
      case 'error':
        throw new UpstreamError('The upstream stream reported an error.', { cause: decodeWire(ErrorEvent, data, what).error?.message })
      default:
        return []
    }
  }

  end(): StreamPart[] {
    if (!this.finished) throw new UpstreamError('The upstream stream ended before message_stop.')
    return []
  }
}

/** The canonical part for one content delta; undefined for deltas that have none (citations). */
function deltaPart(event: ContentBlockDeltaEvent, toolIds: Map<number, string>): StreamPart | undefined {
  const what = 'content_block_delta event'
  switch (event.delta.type) {
    case 'text_delta':
      return { type: 'text-delta', text: decodeWire(TextDelta, event.delta, what).text }
    case 'thinking_delta':
      return { type: 'reasoning-delta', text: decodeWire(ThinkingDelta, event.delta, what).thinking }
    case 'signature_delta':
      return { type: 'reasoning-signature', signature: decodeWire(SignatureDelta, event.delta, what).signature }
    case 'input_json_delta': {
      const json = decodeWire(InputJsonDelta, event.delta, what)
      // A server tool's input (web search) streams the same way; only the client's tool calls are parts.
      const id = toolIds.get(event.index)
      return id ? { type: 'tool-call-delta', id, argumentsDelta: json.partial_json } : undefined
    }
    default:
      return undefined
  }
}
