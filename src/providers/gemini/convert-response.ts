import type { Answer, FinishReason } from '../../canonical/answer'
import type { ReasoningPart, TextPart, ToolCallPart } from '../../canonical/prompt'
import { NO_USAGE } from '../../canonical/usage'
import { UpstreamError } from '../../errors/kinds'
import { decodeWire } from '../../wire/decode'
import { GenerateContentResponse, type ResponsePart } from './api'
import { convertGeminiUsage } from './convert-usage'

export function finishReasonOf(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (hasToolCalls) return 'tool-calls'
  switch (reason) {
    case 'STOP':
      return 'stop'
    case 'MAX_TOKENS':
      return 'length'
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
      return 'content-filter'
    default:
      return 'other'
  }
}

/** Gemini function calls may carry no id; the gateway names them in order. */
function toolCallId(call: { id?: string }, index: number): string {
  return call.id ?? `call_${index}`
}

export function convertParts(parts: ResponsePart[], firstCallIndex = 0): (TextPart | ReasoningPart | ToolCallPart)[] {
  let calls = firstCallIndex
  return parts.flatMap((part): (TextPart | ReasoningPart | ToolCallPart)[] => {
    const call = part.functionCall
    if (call) return [{ type: 'tool-call', id: toolCallId(call, calls++), name: call.name, input: call.args ?? {} }]
    if (part.text) return [part.thought ? { type: 'reasoning', text: part.text } : { type: 'text', text: part.text }]
    return []
  })
}

/**
 * A generateContent answer (the first candidate) as a canonical answer; UpstreamError when it
 * is not one. A prompt blocked by safety checks has no candidate: an empty, filtered answer.
 */
export function convertGeminiAnswer(body: unknown): Answer {
  const response = decodeWire(GenerateContentResponse, body, 'generateContent answer')
  const candidate = response.candidates?.[0]
  if (!candidate && !response.promptFeedback?.blockReason) throw new UpstreamError('The upstream sent a malformed generateContent answer (no candidate).')
  const content = convertParts(candidate?.content?.parts ?? [])
  return {
    id: response.responseId ?? 'gemini',
    content,
    finishReason: candidate
      ? finishReasonOf(
          candidate.finishReason,
          content.some((part) => part.type === 'tool-call'),
        )
      : 'content-filter',
    usage: convertGeminiUsage(response.usageMetadata) ?? NO_USAGE,
  }
}
