import type { Prompt } from '../../canonical/prompt'
import { decodeWire } from '../../wire/decode'
import type { Fetch, NativeBody, ProviderAdapter, UpstreamTarget } from '../adapter'
import { missingApiKey, readApiKey } from '../api-key'
import { type BatchEmbedRequest, BatchEmbedResponse, type GenerateContentRequest } from './api'
import { convertPromptToGemini } from './convert-request'
import { convertGeminiAnswer } from './convert-response'
import { convertGeminiStream } from './convert-stream'
import { convertGeminiUsage } from './convert-usage'
import { mapGeminiError } from './map-error'

/**
 * The Gemini API (https://ai.google.dev/api): `baseUrl` has no version; `/v1beta/models/{model}:
 * generateContent` or `:streamGenerateContent?alt=sse` is appended, the key goes in
 * `x-goog-api-key`. The Gemini surface's requests pass through as they came; other chat surfaces
 * reach it by translation through the canonical prompt; embeddings through batchEmbedContents.
 */
export function geminiAdapter(fetch: Fetch): ProviderAdapter {
  const headers = (target: UpstreamTarget, stream = false): Record<string, string> => ({
    ...target.headers,
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    ...(target.provider.credential ? { 'x-goog-api-key': target.provider.credential } : {}),
  })

  const postGenerateContent = (target: UpstreamTarget, body: GenerateContentRequest | NativeBody, stream: boolean): Promise<Response> => {
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent'
    return fetch(`${target.provider.baseUrl}/v1beta/models/${target.model}:${method}`, {
      method: 'POST',
      headers: headers(target, stream),
      body: JSON.stringify(body),
      signal: target.signal,
    })
  }

  /** https://ai.google.dev/api/embeddings#method:-models.batchembedcontents */
  const postBatchEmbed = (target: UpstreamTarget, texts: string[], dimensions: number | undefined): Promise<Response> => {
    const body: BatchEmbedRequest = {
      requests: texts.map((text) => ({
        model: `models/${target.model}`,
        content: { parts: [{ text }] },
        ...(dimensions ? { outputDimensionality: dimensions } : {}),
      })),
    }
    return fetch(`${target.provider.baseUrl}/v1beta/models/${target.model}:batchEmbedContents`, {
      method: 'POST',
      headers: headers(target),
      body: JSON.stringify(body),
      signal: target.signal,
    })
  }

  return {
    // The Gemini surface's body as the client wrote it (docs/api.md#gemini-api); the model is in the URL.
    generateContent: { send: postGenerateContent, usage: convertGeminiUsage },
    translate: {
      send: (target, prompt: Prompt) => postGenerateContent(target, convertPromptToGemini(prompt), prompt.stream),
      readAnswer: convertGeminiAnswer,
      readStream: convertGeminiStream,
    },
    embeddings: {
      send: postBatchEmbed,
      readVectors: (body) => decodeWire(BatchEmbedResponse, body, 'batchEmbedContents answer').embeddings.map((embedding) => embedding.values),
    },
    mapError: mapGeminiError,
    // Nothing beyond the common fields.
    readCredential: readApiKey,
    missingCredential: missingApiKey,
    checkConfig: () => [],
  }
}
