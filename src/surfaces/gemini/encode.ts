import type { Answer, FinishReason } from '../../canonical/answer'
import type { ReasoningPart, TextPart, ToolCallPart } from '../../canonical/prompt'
import { allInputTokens, type Usage } from '../../canonical/usage'
import { randomToken } from '../../util/ids'
import type { ResponsePart, WrittenGenerateContentResponse, WrittenUsageMetadata } from '../../wire/gemini/response'

/** A canonical answer as a generateContent answer (https://ai.google.dev/api/generate-content#generatecontentresponse). */
export function encodeGenerateContent(answer: Answer, model: string, cost: number): WrittenGenerateContentResponse {
  return {
    candidates: [{ content: { role: 'model', parts: answer.content.map(partOf) }, finishReason: finishReasonOf(answer.finishReason), index: 0 }],
    usageMetadata: usageMetadataOf(answer.usage, cost),
    modelVersion: model,
    responseId: responseId(),
  }
}

export function partOf(part: TextPart | ReasoningPart | ToolCallPart): ResponsePart {
  if (part.type === 'text') return { text: part.text }
  if (part.type === 'reasoning') return { text: part.text, thought: true }
  return { functionCall: { id: part.id, name: part.name, args: part.input ?? {} } }
}

/** Google's finish reasons; a tool call finishes with STOP there (the call itself says what happened). */
export function finishReasonOf(reason: FinishReason): string {
  switch (reason) {
    case 'stop':
    case 'stop-sequence':
    case 'tool-calls':
      return 'STOP'
    case 'length':
      return 'MAX_TOKENS'
    case 'content-filter':
      return 'SAFETY'
    default:
      return 'OTHER'
  }
}

/**
 * Google's counts from the canonical usage: the prompt includes cached tokens (reported apart
 * as cachedContentTokenCount when there were any), and `cost` is what the call was charged.
 */
export function usageMetadataOf(usage: Usage, cost?: number): WrittenUsageMetadata {
  const prompt = allInputTokens(usage)
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: usage.outputTokens,
    totalTokenCount: prompt + usage.outputTokens,
    ...(usage.cacheReadTokens > 0 ? { cachedContentTokenCount: usage.cacheReadTokens } : {}),
    ...(cost === undefined ? {} : { cost }),
  }
}

/** An id in Google's style: the answer does not reveal which route served it. */
export function responseId(): string {
  return randomToken(22)
}
