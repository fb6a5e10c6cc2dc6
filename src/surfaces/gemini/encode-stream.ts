import type { StreamPart } from '../../canonical/answer'
import type { Usage } from '../../canonical/usage'
import type { StreamEncoder } from '../../dispatch/surface'
import type { GatewayError } from '../../errors/gateway-error'
import { googleErrorBody } from '../../errors/google-envelope'
import type { SseEvent } from '../../streaming/sse'
import type { ResponsePart, WrittenGenerateContentResponse } from '../../wire/gemini/response'
import { finishReasonOf, responseId, usageMetadataOf } from './encode'

/**
 * Canonical stream parts as streamGenerateContent's `alt=sse` events: each a whole
 * GenerateContentResponse holding the new parts (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent).
 * A function call goes out whole once its arguments are complete (Gemini never splits one); the
 * last event has the finish reason and the usage with the cost. A failure is Google's error
 * envelope as the last event.
 */
export class GenerateContentStreamEncoder implements StreamEncoder {
  private readonly id = responseId()
  private call: { id: string; name: string; arguments: string } | undefined

  constructor(private readonly model: string) {}

  encode(part: StreamPart): SseEvent[] {
    switch (part.type) {
      case 'text-delta':
        return part.text === '' ? [] : [...this.flushCall(), this.chunk([{ text: part.text }])]
      case 'reasoning-delta':
        return part.text === '' ? [] : [...this.flushCall(), this.chunk([{ text: part.text, thought: true }])]
      case 'tool-call-start': {
        const flushed = this.flushCall()
        this.call = { id: part.id, name: part.name, arguments: '' }
        return flushed
      }
      case 'tool-call-delta':
        if (this.call) this.call.arguments += part.argumentsDelta
        return []
      default:
        return []
    }
  }

  finish(part: Extract<StreamPart, { type: 'finish' }>, usage: Usage, cost: number): SseEvent[] {
    const flushed = this.flushCall()
    return [
      ...flushed,
      event({
        ...this.response([]),
        candidates: [{ content: { role: 'model', parts: [] }, finishReason: finishReasonOf(part.finishReason), index: 0 }],
        usageMetadata: usageMetadataOf(usage, cost),
      }),
    ]
  }

  failure(error: GatewayError): SseEvent[] {
    return [{ data: JSON.stringify(googleErrorBody(error)) }]
  }

  private flushCall(): SseEvent[] {
    const call = this.call
    if (!call) return []
    this.call = undefined
    return [this.chunk([{ functionCall: { id: call.id, name: call.name, args: parsedArguments(call.arguments) } }])]
  }

  private chunk(parts: ResponsePart[]): SseEvent {
    return event(this.response(parts))
  }

  private response(parts: ResponsePart[]): WrittenGenerateContentResponse {
    return { candidates: [{ content: { role: 'model', parts }, index: 0 }], modelVersion: this.model, responseId: this.id }
  }
}

/** A call's arguments as the upstream streamed them: JSON, or an empty object when it sent none. */
function parsedArguments(text: string): unknown {
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    return {}
  }
}

function event(response: WrittenGenerateContentResponse): SseEvent {
  return { data: JSON.stringify(response) }
}
