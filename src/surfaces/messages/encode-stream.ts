import type { StreamPart } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import type { StreamEncoder } from '../../dispatch/surface'
import type { GatewayError } from '../../errors/gateway-error'
import { errorBody } from '../../errors/render'
import type { SseEvent } from '../../streaming/sse'
import type { AssistantBlockParam } from '../../wire/messages/request'
import { stopReasonOf } from '../../wire/messages/stop-reason'
import type { Delta, WrittenStreamEvent } from '../../wire/messages/stream'
import { messagesUsageOf } from '../../wire/messages/usage'
import { messageId } from './encode'

type BlockKind = 'text' | 'thinking' | 'tool_use'

/**
 * Canonical stream parts as the native messages event sequence: message_start, then per block
 * content_block_start, deltas, content_block_stop, then message_delta with the usage (and
 * cost) and message_stop (https://docs.claude.com/en/docs/build-with-claude/streaming).
 */
export class MessageStreamEncoder implements StreamEncoder {
  private index = -1
  private open: { kind: BlockKind; toolId?: string } | undefined

  constructor(
    private readonly model: string,
    /** Shown in message_start before the upstream has reported anything. */
    private readonly estimatedInputTokens: number,
  ) {}

  /** Events for one part; `finish` is handled by `finish()`, which needs the settled cost. */
  encode(part: StreamPart): SseEvent[] {
    switch (part.type) {
      case 'start':
        return [
          event({
            type: 'message_start',
            message: {
              id: messageId(),
              type: 'message',
              role: 'assistant',
              model: this.model,
              content: [],
              stop_reason: null,
              stop_sequence: null,
              usage: { input_tokens: this.estimatedInputTokens, output_tokens: 0 },
            },
          }),
        ]
      case 'text-delta':
        return [...this.openBlock('text', { type: 'text', text: '' }), this.delta({ type: 'text_delta', text: part.text })]
      case 'reasoning-delta':
        return [...this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' }), this.delta({ type: 'thinking_delta', thinking: part.text })]
      case 'reasoning-signature':
        return [
          ...this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' }),
          this.delta({ type: 'signature_delta', signature: part.signature }),
        ]
      case 'tool-call-start':
        return [...this.closeBlock(), ...this.startBlock('tool_use', { type: 'tool_use', id: part.id, name: part.name, input: {} }, part.id)]
      case 'tool-call-delta':
        return [this.delta({ type: 'input_json_delta', partial_json: part.argumentsDelta })]
      case 'finish':
        return []
    }
  }

  finish(part: Extract<StreamPart, { type: 'finish' }>, usage: Usage, cost: number): SseEvent[] {
    return [
      ...this.closeBlock(),
      event({
        type: 'message_delta',
        delta: { stop_reason: stopReasonOf(part.finishReason), stop_sequence: part.stopSequence ?? null },
        usage: { ...messagesUsageOf(usage), cost },
      }),
      event({ type: 'message_stop' }),
    ]
  }

  failure(error: GatewayError): SseEvent[] {
    return [{ event: 'error', data: JSON.stringify(errorBody(error, 'messages')) }]
  }

  private openBlock(kind: BlockKind, block: AssistantBlockParam): SseEvent[] {
    if (this.open?.kind === kind) return []
    return [...this.closeBlock(), ...this.startBlock(kind, block)]
  }

  private startBlock(kind: BlockKind, block: AssistantBlockParam, toolId?: string): SseEvent[] {
    this.index++
    this.open = { kind, toolId }
    return [event({ type: 'content_block_start', index: this.index, content_block: block })]
  }

  private closeBlock(): SseEvent[] {
    if (!this.open) return []
    this.open = undefined
    return [event({ type: 'content_block_stop', index: this.index })]
  }

  private delta(delta: Delta): SseEvent {
    return event({ type: 'content_block_delta', index: this.index, delta })
  }
}

function event(data: WrittenStreamEvent): SseEvent {
  return { event: data.type, data: JSON.stringify(data) }
}
