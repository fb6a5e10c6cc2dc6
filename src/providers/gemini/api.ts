import { Type } from '@sinclair/typebox'

/**
 * Gemini API wire types the gateway writes and reads (https://ai.google.dev/api/generate-content).
 * generateContent's request and answer are shared with the Gemini surface (src/wire/gemini/):
 * the same types in both directions. What comes back is a schema, checked before it is read.
 */

export type { BatchEmbedRequest, Content, FunctionCallingConfig, GenerateContentRequest, Part } from '../../wire/gemini/request'
export { GenerateContentResponse, ResponsePart, UsageMetadata } from '../../wire/gemini/response'

// ---- batchEmbedContents (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents) ----

export const BatchEmbedResponse = Type.Object({ embeddings: Type.Array(Type.Object({ values: Type.Array(Type.Number()) })) })

// ---- Errors (Google's envelope, also mid-stream) ----

export const ErrorBody = Type.Object({ error: Type.Object({ message: Type.Optional(Type.Unknown()), status: Type.Optional(Type.Unknown()) }) })
