import { type Static, Type } from '@sinclair/typebox'
import { WireCount } from '../decode'

/**
 * A generateContent answer and stream chunk (the same object,
 * https://ai.google.dev/api/generate-content#generatecontentresponse) as the gateway reads it
 * from an upstream and writes it to a client. Read answers are checked against these schemas
 * first; only the fields used are named, everything else passes.
 */

export const UsageMetadata = Type.Object({
  promptTokenCount: WireCount,
  candidatesTokenCount: WireCount,
  thoughtsTokenCount: WireCount,
  cachedContentTokenCount: WireCount,
  toolUsePromptTokenCount: WireCount,
})
export type UsageMetadata = Static<typeof UsageMetadata>

export const ResponsePart = Type.Object({
  text: Type.Optional(Type.String()),
  thought: Type.Optional(Type.Boolean()),
  functionCall: Type.Optional(Type.Object({ id: Type.Optional(Type.String()), name: Type.String({ minLength: 1 }), args: Type.Optional(Type.Unknown()) })),
})
export type ResponsePart = Static<typeof ResponsePart>

/** A candidate stopped by safety checks may come without content. */
const Candidate = Type.Object({
  content: Type.Optional(Type.Object({ parts: Type.Optional(Type.Array(ResponsePart)) })),
  finishReason: Type.Optional(Type.String()),
})

/**
 * A prompt that was blocked has no candidates, only `promptFeedback.blockReason`; a stream
 * chunk may carry usage alone. Vertex's chunks repeat only `trafficType` until the last.
 */
export const GenerateContentResponse = Type.Object({
  responseId: Type.Optional(Type.String()),
  candidates: Type.Optional(Type.Array(Candidate)),
  promptFeedback: Type.Optional(Type.Object({ blockReason: Type.Optional(Type.String()) })),
  usageMetadata: Type.Optional(UsageMetadata),
})
export type GenerateContentResponse = Static<typeof GenerateContentResponse>

/** The usage a gateway answer reports: Google's counts, and what the call cost in credits. */
export type WrittenUsageMetadata = {
  promptTokenCount: number
  candidatesTokenCount: number
  totalTokenCount: number
  thoughtsTokenCount?: number
  cachedContentTokenCount?: number
  cost?: number
}

/** A generateContent answer or stream chunk as the gateway writes it. */
export type WrittenGenerateContentResponse = {
  candidates: {
    content: { role: 'model'; parts: ResponsePart[] }
    finishReason?: string
    index: number
  }[]
  usageMetadata?: WrittenUsageMetadata
  modelVersion: string
  responseId: string
}
