import { Value } from '@sinclair/typebox/value'
import type { FinishReason, StreamPart } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import { UpstreamError } from '../../errors/kinds'
import { readSse } from '../../http/sse'
import { decodeWire, parseWireJson } from '../decode'
import { ChatChunk, ChatStreamError } from './api'
import { finishReasonOf } from './convert-response'
import { convertChatUsage } from './convert-usage'

/**
 * An OpenAI chat completions stream as canonical parts
 * (https://platform.openai.com/docs/api-reference/chat-streaming). Tool calls are told apart
 * by `index`; only their first fragment carries the id and name. The usage chunk
 * (choices: []) comes last, before [DONE]; `finish` is emitted once the stream ends.
 */
export async function* convertChatStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamPart> {
  const callIds = new Map<number, string>()
  let finishReason: FinishReason | undefined
  let usage: Usage | undefined
  let started = false
  for await (const event of readSse(body)) {
    if (event.data === '[DONE]') break
    const data = parseWireJson(event.data, 'chat stream chunk')
    if (Value.Check(ChatStreamError, data)) throw new UpstreamError('The upstream stream reported an error.', { cause: data.error.message })
    const chunk = decodeWire(ChatChunk, data, 'chat stream chunk')
    if (!started) {
      started = true
      yield { type: 'start', id: chunk.id ?? 'chatcmpl' }
    }
    usage = convertChatUsage(chunk.usage) ?? usage
    const [choice] = chunk.choices
    const delta = choice?.delta
    if (delta?.reasoning_content) yield { type: 'reasoning-delta', text: delta.reasoning_content }
    if (delta?.content) yield { type: 'text-delta', text: delta.content }
    for (const call of delta?.tool_calls ?? []) {
      const index = call.index ?? 0
      if (call.id && !callIds.has(index)) {
        if (!call.function?.name) throw new UpstreamError('The upstream sent a malformed chat stream chunk (a tool call without a name).')
        callIds.set(index, call.id)
        yield { type: 'tool-call-start', id: call.id, name: call.function.name }
      }
      const id = callIds.get(index)
      if (!call.function?.arguments) continue
      if (!id) throw new UpstreamError('The upstream sent a malformed chat stream chunk (tool call arguments before the call).')
      yield { type: 'tool-call-delta', id, argumentsDelta: call.function.arguments }
    }
    if (choice?.finish_reason) finishReason = finishReasonOf(choice.finish_reason)
  }
  if (!finishReason) throw new UpstreamError('The upstream stream ended before it finished.')
  yield { type: 'finish', finishReason, usage }
}
