import { Value } from '@sinclair/typebox/value'
import type { StreamPart } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import { UpstreamError } from '../../errors/kinds'
import type { SseEvent } from '../../streaming/sse'
import { decodeWire, parseWireJson } from '../../wire/decode'
import type { StreamTranslator } from '../adapter'
import { ErrorBody, GenerateContentResponse } from './api'
import { convertParts, finishReasonOf } from './convert-response'
import { convertGeminiUsage } from './convert-usage'

/**
 * A streamGenerateContent?alt=sse stream (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent)
 * as canonical parts: each chunk carries new parts; usage is cumulative (on Vertex only the
 * last chunk has it); the last chunk has the finish reason, and the connection then closes.
 * Function calls arrive whole.
 */
export function convertGeminiStream(): StreamTranslator {
  return new GeminiStreamTranslator()
}

class GeminiStreamTranslator implements StreamTranslator {
  private started = false
  private calls = 0
  private usage: Usage | undefined
  private finish: string | undefined
  private ended = false

  event(event: SseEvent): StreamPart[] {
    if (this.ended) return []
    const data = parseWireJson(event.data, 'generateContent stream chunk')
    if (Value.Check(ErrorBody, data)) throw new UpstreamError('The upstream stream reported an error.', { cause: data.error.message })
    const chunk = decodeWire(GenerateContentResponse, data, 'generateContent stream chunk')
    const parts: StreamPart[] = []
    if (!this.started) {
      this.started = true
      parts.push({ type: 'start', id: chunk.responseId ?? 'gemini' })
    }
    const candidate = chunk.candidates?.[0]
    for (const part of convertParts(candidate?.content?.parts ?? [], this.calls)) {
      if (part.type === 'text') parts.push({ type: 'text-delta', text: part.text })
      else if (part.type === 'reasoning') parts.push({ type: 'reasoning-delta', text: part.text })
      else {
        this.calls++
        parts.push(
          { type: 'tool-call-start', id: part.id, name: part.name },
          { type: 'tool-call-delta', id: part.id, argumentsDelta: JSON.stringify(part.input) },
        )
      }
    }
    this.usage = convertGeminiUsage(chunk.usageMetadata) ?? this.usage
    if (candidate?.finishReason) this.finish = candidate.finishReason
    // A blocked prompt streams one chunk with no candidate: it is finished, filtered.
    else if (!candidate && chunk.promptFeedback?.blockReason) this.finish = 'SAFETY'
    return parts
  }

  end(): StreamPart[] {
    if (this.ended) return []
    this.ended = true
    if (!this.finish) throw new UpstreamError('The upstream stream ended before it finished.')
    return [{ type: 'finish', finishReason: finishReasonOf(this.finish, this.calls > 0), usage: this.usage }]
  }
}
