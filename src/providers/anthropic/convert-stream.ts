import { readSse } from '../../http/sse'
import type { FinishReason, StreamPart } from '../../spec/answer'
import { finishReasonOf } from './convert-response'
import { convertMessagesUsage } from './convert-usage'

/**
 * A native messages stream (WIRE.md §5.3) as canonical parts. Usage starts in message_start
 * and is completed, cumulatively, by message_delta; `finish` goes out at message_stop.
 */
export async function* convertMessagesStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamPart> {
  const toolIds = new Map<number, string>()
  let usage: Record<string, unknown> = {}
  let finishReason: FinishReason = 'other'
  let stopSequence: string | undefined
  for await (const event of readSse(body)) {
    const data = JSON.parse(event.data) as Record<string, any>
    switch (data.type ?? event.event) {
      case 'message_start':
        usage = { ...(data.message?.usage ?? {}) }
        yield { type: 'start', id: String(data.message?.id ?? 'msg') }
        break
      case 'content_block_start':
        if (data.content_block?.type === 'tool_use') {
          toolIds.set(data.index, String(data.content_block.id))
          yield { type: 'tool-call-start', id: String(data.content_block.id), name: String(data.content_block.name) }
        }
        break
      case 'content_block_delta': {
        const delta = data.delta ?? {}
        if (delta.type === 'text_delta') yield { type: 'text-delta', text: String(delta.text) }
        else if (delta.type === 'thinking_delta') yield { type: 'reasoning-delta', text: String(delta.thinking) }
        else if (delta.type === 'signature_delta') yield { type: 'reasoning-signature', signature: String(delta.signature) }
        else if (delta.type === 'input_json_delta' && toolIds.has(data.index)) {
          yield { type: 'tool-call-delta', id: toolIds.get(data.index)!, argumentsDelta: String(delta.partial_json) }
        }
        break
      }
      case 'message_delta':
        for (const [field, value] of Object.entries(data.usage ?? {})) if (value !== null && value !== undefined) usage[field] = value
        finishReason = finishReasonOf(data.delta?.stop_reason)
        if (typeof data.delta?.stop_sequence === 'string') stopSequence = data.delta.stop_sequence
        break
      case 'message_stop':
        yield { type: 'finish', finishReason, ...(stopSequence ? { stopSequence } : {}), usage: convertMessagesUsage(usage) }
        return
      case 'error':
        throw new Error(String(data.error?.message ?? 'the upstream stream reported an error'))
    }
  }
  throw new Error('the upstream stream ended before message_stop')
}
