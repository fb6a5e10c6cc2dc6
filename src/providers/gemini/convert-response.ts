import type { Answer, FinishReason } from '../../spec/answer'
import type { ReasoningPart, TextPart, ToolCallPart } from '../../spec/prompt'
import { NO_USAGE } from '../../spec/usage'
import type { GenerateContentResponse, Part } from './api'
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
export function toolCallId(part: Part, index: number): string {
  return part.functionCall?.id ?? `call_${index}`
}

export function convertParts(parts: Part[], firstCallIndex = 0): (TextPart | ReasoningPart | ToolCallPart)[] {
  let calls = firstCallIndex
  return parts.flatMap((part): (TextPart | ReasoningPart | ToolCallPart)[] => {
    if (part.functionCall) return [{ type: 'tool-call', id: toolCallId(part, calls++), name: part.functionCall.name, input: part.functionCall.args ?? {} }]
    if (typeof part.text === 'string' && part.text) return [part.thought ? { type: 'reasoning', text: part.text } : { type: 'text', text: part.text }]
    return []
  })
}

/** A generateContent answer (the first candidate) as a canonical answer. */
export function convertGeminiAnswer(body: unknown): Answer {
  const response = (body ?? {}) as GenerateContentResponse
  const candidate = response.candidates?.[0]
  const content = convertParts(candidate?.content?.parts ?? [])
  return {
    id: response.responseId ?? 'gemini',
    content,
    finishReason: finishReasonOf(candidate?.finishReason, content.some((part) => part.type === 'tool-call')),
    usage: convertGeminiUsage(response.usageMetadata) ?? NO_USAGE,
  }
}
