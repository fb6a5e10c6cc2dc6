import type { StreamPart } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import type { StreamEncoder } from '../../dispatch/surface'
import type { GatewayError } from '../../errors/gateway-error'
import { errorBody } from '../../errors/render'
import type { SseEvent } from '../../streaming/sse'
import type { WrittenDelta } from '../../wire/chat-completions/chunk'
import { chatFinishReason } from '../../wire/chat-completions/finish-reason'
import { chatUsageOf } from '../../wire/chat-completions/usage'
import { completionId } from './encode'

/**
 * Canonical stream parts as chat.completion.chunk events (docs/upstreams.md#openai-chat-completions): a role chunk, content
 * and tool-call deltas (tool calls numbered by `index`), a finish chunk, the usage chunk when
 * the client asked for it, then [DONE]. A failure ends with an error chunk and no [DONE].
 */
export class ChatStreamEncoder implements StreamEncoder {
  private id = 'chatcmpl'
  private readonly created = Math.floor(Date.now() / 1000)
  private readonly toolIndexes = new Map<string, number>()
  /** Every chunk's JSON up to its delta: the same for the whole stream (once its id is known), written once. */
  private chunkStart: string | undefined

  constructor(
    private readonly model: string,
    private readonly clientWantsUsage: boolean,
  ) {}

  encode(part: StreamPart): SseEvent[] {
    switch (part.type) {
      case 'start':
        this.id = completionId()
        this.chunkStart = undefined
        return [this.chunk({ role: 'assistant', content: '' })]
      case 'text-delta':
        return [this.chunk({ content: part.text })]
      case 'reasoning-delta':
        return [this.chunk({ reasoning_content: part.text })]
      case 'tool-call-start': {
        const index = this.toolIndexes.size
        this.toolIndexes.set(part.id, index)
        return [this.chunk({ tool_calls: [{ index, id: part.id, type: 'function', function: { name: part.name, arguments: '' } }] })]
      }
      case 'tool-call-delta':
        return [this.chunk({ tool_calls: [{ index: this.toolIndexes.get(part.id) ?? 0, function: { arguments: part.argumentsDelta } }] })]
      default:
        return []
    }
  }

  finish(part: Extract<StreamPart, { type: 'finish' }>, usage: Usage, cost: number): SseEvent[] {
    return [
      this.chunk({}, chatFinishReason(part.finishReason)),
      ...(this.clientWantsUsage ? [{ data: JSON.stringify({ ...this.base(), choices: [], usage: chatUsageOf(usage, cost) }) }] : []),
      { data: '[DONE]' },
    ]
  }

  failure(error: GatewayError): SseEvent[] {
    return [{ data: JSON.stringify(errorBody(error, 'openai')) }]
  }

  private base() {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model }
  }

  /** The JSON of `{ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason }] }`, its constant start written once. */
  private chunk(delta: WrittenDelta, finishReason: string | null = null): SseEvent {
    this.chunkStart ??= `${JSON.stringify(this.base()).slice(0, -1)},"choices":[{"index":0,"delta":`
    return { data: `${this.chunkStart}${JSON.stringify(delta)},"logprobs":null,"finish_reason":${JSON.stringify(finishReason)}}]}` }
  }
}
