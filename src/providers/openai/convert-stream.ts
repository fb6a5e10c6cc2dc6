import { Value } from '@sinclair/typebox/value'
import type { FinishReason, StreamPart } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import { UpstreamError } from '../../errors/kinds'
import type { SseEvent } from '../../streaming/sse'
import { ChatChunk, ChatStreamError } from '../../wire/chat-completions/chunk'
import { finishReasonOf } from '../../wire/chat-completions/finish-reason'
import { usageFromChat } from '../../wire/chat-completions/usage'
import { decodeWire, parseWireJson } from '../../wire/decode'
import type { StreamTranslator } from '../adapter'

/**
 * An OpenAI chat completions stream as canonical parts
 * (https://platform.openai.com/docs/api-reference/chat-streaming). Tool calls are told apart
 * by `index`; only their first fragment carries the id and name. The usage chunk
 * (choices: []) comes last, before [DONE]; `finish` is emitted at [DONE], or at the stream's end
 * when [DONE] never came.
 */
export function convertChatStream(): StreamTranslator {
  return new ChatStreamTranslator()
}

class ChatStreamTranslator implements StreamTranslator {
  private readonly callIds = new Map<number, string>()
  private finishReason: FinishReason | undefined
  private usage: Usage | undefined
  private started = false
  private done = false

  event(event: SseEvent): StreamPart[] {
    if (this.done) return []
    if (event.data === '[DONE]') return this.end()
    const data = parseWireJson(event.data, 'chat stream chunk')
    if (Value.Check(ChatStreamError, data)) throw new UpstreamError('The upstream stream reported an error.', { cause: data.error.message })
    const chunk = decodeWire(ChatChunk, data, 'chat stream chunk')
    const parts: StreamPart[] = []
    if (!this.started) {
      this.started = true
      parts.push({ type: 'start', id: chunk.id ?? 'chatcmpl' })
    }
    this.usage = usageFromChat(chunk.usage) ?? this.usage
    const [choice] = chunk.choices
    const delta = choice?.delta
    if (delta?.reasoning_content) parts.push({ type: 'reasoning-delta', text: delta.reasoning_content })
    if (delta?.content) parts.push({ type: 'text-delta', text: delta.content })
    for (const call of delta?.tool_calls ?? []) {
      const index = call.index ?? 0
      if (call.id && !this.callIds.has(index)) {
        if (!call.function?.name) throw new UpstreamError('The upstream sent a malformed chat stream chunk (a tool call without a name).')
        this.callIds.set(index, call.id)
        parts.push({ type: 'tool-call-start', id: call.id, name: call.function.name })
      }
      const id = this.callIds.get(index)
      if (!call.function?.arguments) continue
      if (!id) throw new UpstreamError('The upstream sent a malformed chat stream chunk (tool call arguments before the call).')
      parts.push({ type: 'tool-call-delta', id, argumentsDelta: call.function.arguments })
    }
    if (choice?.finish_reason) this.finishReason = finishReasonOf(choice.finish_reason)
    return parts
  }

  end(): StreamPart[] {
    if (this.done) return []
    this.done = true
    if (!this.finishReason) throw new UpstreamError('The upstream stream ended before it finished.')
    return [{ type: 'finish', finishReason: this.finishReason, usage: this.usage }]
  }
}
