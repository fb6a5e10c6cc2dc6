/**
 * Gemini API wire types the gateway reads and writes
 * (https://ai.google.dev/api/generate-content). Only the fields used are typed.
 */
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

export interface UsageMetadata {
  promptTokenCount?: number
  candidatesTokenCount?: number
  thoughtsTokenCount?: number
  cachedContentTokenCount?: number
  toolUsePromptTokenCount?: number
}

export interface GenerateContentResponse {
  responseId?: string
  candidates?: { content?: Content; finishReason?: string }[]
  usageMetadata?: UsageMetadata
  error?: { code?: number; message?: string; status?: string }
}
