import { Value } from '@sinclair/typebox/value'
import type { StreamPart } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import { UpstreamError } from '../../errors/kinds'
import { readSse } from '../../http/sse'
import { decodeWire, parseWireJson } from '../decode'
import { ErrorBody, GenerateContentResponse } from './api'
import { convertParts, finishReasonOf } from './convert-response'
import { convertGeminiUsage } from './convert-usage'

/**
 * A streamGenerateContent?alt=sse stream (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent)
 * as canonical parts: each chunk carries new parts; usage is cumulative (on Vertex only the
 * last chunk has it); the last chunk has the finish reason, and the connection then closes.
 * Function calls arrive whole.
 */
export async function* convertGeminiStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamPart> {
  let started = false
  let calls = 0
  let usage: Usage | undefined
  let finish: string | undefined
  for await (const event of readSse(body)) {
    const data = parseWireJson(event.data, 'generateContent stream chunk')
    if (Value.Check(ErrorBody, data)) throw new UpstreamError('The upstream stream reported an error.', { cause: data.error.message })
    const chunk = decodeWire(GenerateContentResponse, data, 'generateContent stream chunk')
    if (!started) {
      started = true
      yield { type: 'start', id: chunk.responseId ?? 'gemini' }
    }
    const candidate = chunk.candidates?.[0]
    for (const part of convertParts(candidate?.content?.parts ?? [], calls)) {
      if (part.type === 'text') yield { type: 'text-delta', text: part.text }
      else if (part.type === 'reasoning') yield { type: 'reasoning-delta', text: part.text }
      else {
        calls++
        yield { type: 'tool-call-start', id: part.id, name: part.name }
        yield { type: 'tool-call-delta', id: part.id, argumentsDelta: JSON.stringify(part.input) }
      }
    }
    usage = convertGeminiUsage(chunk.usageMetadata) ?? usage
    if (candidate?.finishReason) finish = candidate.finishReason
    // A blocked prompt streams one chunk with no candidate: it is finished, filtered.
    else if (!candidate && chunk.promptFeedback?.blockReason) finish = 'SAFETY'
  }
  if (!finish) throw new UpstreamError('The upstream stream ended before it finished.')
  yield { type: 'finish', finishReason: finishReasonOf(finish, calls > 0), usage }
}
