import type { ProviderAdapter, UpstreamTarget } from '../adapter'
import type { Prompt } from '../../spec/prompt'
import { convertPromptToGemini } from './convert-request'
import { convertGeminiAnswer } from './convert-response'
import { convertGeminiStream } from './convert-stream'
import { mapGeminiError } from './map-error'

/**
 * The Gemini API (https://ai.google.dev/api): `baseUrl` has no version; `/v1beta/models/{model}:
 * generateContent` or `:streamGenerateContent?alt=sse` is appended, the key goes in
 * `x-goog-api-key`. Chat is reached by translation through the canonical prompt; embeddings
 * through batchEmbedContents.
 */
export const geminiAdapter: ProviderAdapter = {
  sendPrompt: postGenerateContent,
  readAnswer: convertGeminiAnswer,
  readStream: convertGeminiStream,
  sendEmbeddings: postBatchEmbed,
  readEmbeddings: (body) => ((body as { embeddings?: { values?: number[] }[] }).embeddings ?? []).map((embedding) => embedding.values ?? []),
  mapError: mapGeminiError,
}

/** https://ai.google.dev/api/embeddings#method:-models.batchembedcontents */
function postBatchEmbed(target: UpstreamTarget, texts: string[], dimensions: number | undefined): Promise<Response> {
  return fetch(`${target.provider.baseUrl.replace(/\/+$/, '')}/v1beta/models/${target.model}:batchEmbedContents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(target.provider.credential ? { 'x-goog-api-key': target.provider.credential } : {}) },
    body: JSON.stringify({
      requests: texts.map((text) => ({ model: `models/${target.model}`, content: { parts: [{ text }] }, ...(dimensions ? { outputDimensionality: dimensions } : {}) })),
    }),
    signal: target.signal,
  })
}

function postGenerateContent(target: UpstreamTarget, prompt: Prompt): Promise<Response> {
  const method = prompt.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'
  return fetch(`${target.provider.baseUrl.replace(/\/+$/, '')}/v1beta/models/${target.model}:${method}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(target.provider.credential ? { 'x-goog-api-key': target.provider.credential } : {}),
    },
    body: JSON.stringify(convertPromptToGemini(prompt)),
    signal: target.signal,
  })
}
