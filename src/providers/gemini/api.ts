import { type Static, Type } from '@sinclair/typebox'
import type { JsonSchema } from '../../canonical/prompt'
import { WireCount } from '../../wire/decode'

/**
 * Gemini API wire types the gateway writes and reads (https://ai.google.dev/api/generate-content).
 * Requests are plain types (the gateway builds them); what comes back is a schema as well, so
 * it is checked before it is read. Only the fields used are named; everything else passes.
 */

// ---- generateContent request ----

export interface Part {
  text?: string
  thought?: boolean
  inlineData?: { mimeType: string; data: string }
  fileData?: { mimeType?: string; fileUri: string }
  functionCall?: { id?: string; name: string; args?: unknown }
  functionResponse?: { id?: string; name: string; response: unknown }
}

export interface Content {
  role?: 'user' | 'model'
  parts?: Part[]
}

export type FunctionCallingConfig = { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] }

export type GenerateContentRequest = {
  contents: Content[]
  systemInstruction?: Content
  generationConfig?: { temperature?: number; topP?: number; maxOutputTokens?: number; stopSequences?: string[] }
  tools?: { functionDeclarations: { name: string; description?: string; parameters: JsonSchema }[] }[]
  toolConfig?: { functionCallingConfig: FunctionCallingConfig }
}

// ---- generateContent answer and stream chunk (the same object) ----

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

// ---- batchEmbedContents (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents) ----

export type BatchEmbedRequest = { requests: { model: string; content: Content; outputDimensionality?: number }[] }

export const BatchEmbedResponse = Type.Object({ embeddings: Type.Array(Type.Object({ values: Type.Array(Type.Number()) })) })

// ---- Errors (Google's envelope, also mid-stream) ----

export const ErrorBody = Type.Object({ error: Type.Object({ message: Type.Optional(Type.Unknown()), status: Type.Optional(Type.Unknown()) }) })
