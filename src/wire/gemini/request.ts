import type { JsonSchema } from '../../canonical/prompt'

/**
 * A generateContent request (https://ai.google.dev/api/generate-content#request-body) as the
 * gateway reads it from a client (the Gemini surface) and writes it to an upstream (the gemini
 * provider): the same types in both directions. Only the fields read or written are named.
 */

export interface Part {
  text?: string
  /** On a model turn: the text is the model's thinking. */
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

export type FunctionDeclaration = { name: string; description?: string; parameters: JsonSchema }

export type GenerationConfig = {
  temperature?: number
  topP?: number
  maxOutputTokens?: number
  stopSequences?: string[]
  /** Read from clients only: structured output, which a route reached by translation cannot honour. */
  responseMimeType?: string
  responseSchema?: unknown
  responseJsonSchema?: unknown
}

export type GenerateContentRequest = {
  contents: Content[]
  systemInstruction?: Content
  generationConfig?: GenerationConfig
  tools?: { functionDeclarations: FunctionDeclaration[] }[]
  toolConfig?: { functionCallingConfig: FunctionCallingConfig }
}

/** https://ai.google.dev/api/embeddings#method:-models.batchembedcontents */
export type BatchEmbedRequest = { requests: { model: string; content: Content; outputDimensionality?: number }[] }
