import type { FinishReason, StreamPart } from '../../spec/answer'
import type { Usage } from '../../spec/usage'
import { readSse } from '../../http/sse'
import { finishReasonOf } from './convert-response'
import { convertChatUsage } from './convert-usage'

/**
 * An OpenAI chat completions stream (WIRE.md §2) as canonical parts. Tool calls are told
 * apart by `index`; only their first fragment carries the id and name. The usage chunk
 * (choices: []) comes last, before [DONE]; `finish` is emitted once the stream ends.
 */
export async function* convertChatStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamPart> {
  const callIds = new Map<number, string>()
  let finishReason: FinishReason | undefined
  let usage: Usage | undefined
  let started = false
  for await (const event of readSse(body)) {
    if (event.data === '[DONE]') break
    const chunk = JSON.parse(event.data) as {
      id?: string
      error?: { message?: string }
      usage?: unknown
      choices?: { delta?: Record<string, unknown>; finish_reason?: unknown }[]
    }
    if (chunk.error) throw new Error(chunk.error.message ?? 'the upstream stream reported an error')
    if (!started) {
      started = true
      yield { type: 'start', id: chunk.id ?? 'chatcmpl' }
    }
    if (chunk.usage) usage = convertChatUsage(chunk.usage) ?? usage
    const choice = chunk.choices?.[0]
    const delta = choice?.delta ?? {}
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content) yield { type: 'reasoning-delta', text: delta.reasoning_content }
    if (typeof delta.content === 'string' && delta.content) yield { type: 'text-delta', text: delta.content }
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls as { index?: number; id?: string; function?: { name?: string; arguments?: string } }[]) {
        const index = call.index ?? 0
        if (call.id && !callIds.has(index)) {
          callIds.set(index, call.id)
          yield { type: 'tool-call-start', id: call.id, name: call.function?.name ?? '' }
        }
        const id = callIds.get(index)
        if (id && call.function?.arguments) yield { type: 'tool-call-delta', id, argumentsDelta: call.function.arguments }
      }
    }
    if (choice?.finish_reason) finishReason = finishReasonOf(choice.finish_reason)
  }
  if (!finishReason) throw new Error('the upstream stream ended before it finished')
  yield { type: 'finish', finishReason, usage }
}
