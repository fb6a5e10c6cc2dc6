import { MOCK_VECTOR } from './openai-media'
import { type ChatScript, DEFAULT_TEXT, stopAfterChunks, streamEvents, usageOf } from './scripts'

/** The Gemini API's generateContent and streamGenerateContent?alt=sse (docs/upstreams.md#gemini). */

function usageMetadata(body: any, script: ChatScript, text: string) {
  const usage = usageOf({ messages: body?.contents }, script, text)
  return {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: usage.completion_tokens,
    totalTokenCount: usage.prompt_tokens + usage.completion_tokens,
    ...(usage.cached_tokens ? { cachedContentTokenCount: usage.cached_tokens } : {}),
  }
}

function parts(script: ChatScript, text: string) {
  return script.toolCalls ? script.toolCalls.map((call) => ({ functionCall: { name: call.name, args: JSON.parse(call.arguments) } })) : [{ text }]
}

export function generateContent(body: any, script: ChatScript, model: string): Response {
  const text = script.text ?? DEFAULT_TEXT
  return Response.json({
    candidates: [{ content: { role: 'model', parts: parts(script, text) }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usageMetadata(body, script, text),
    modelVersion: model,
    responseId: 'gemini-response-1',
  })
}

export function streamGenerateContent(body: any, script: ChatScript, model: string): Response {
  const text = script.text ?? DEFAULT_TEXT
  const usage = usageMetadata(body, script, text)
  const pieces: object[][] = script.toolCalls ? [parts(script, text)] : text.split(/(?<= )/).map((word) => [{ text: word }])
  const chunks = pieces.map((chunkParts, index) => ({
    candidates: [{ content: { role: 'model', parts: chunkParts }, ...(index === pieces.length - 1 ? { finishReason: 'STOP' } : {}), index: 0 }],
    // The Gemini API repeats the cumulative usage on every chunk.
    usageMetadata: { ...usage, candidatesTokenCount: Math.ceil((usage.candidatesTokenCount * (index + 1)) / pieces.length) },
    modelVersion: model,
    responseId: 'gemini-response-1',
  }))
  const stop = stopAfterChunks(script)
  const shown = stop === undefined ? chunks : chunks.slice(0, stop)
  return streamEvents(
    shown.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`),
    script,
  )
}

export function googleError(status: number): unknown {
  const name = status === 400 ? 'INVALID_ARGUMENT' : status === 404 ? 'NOT_FOUND' : status === 429 ? 'RESOURCE_EXHAUSTED' : 'UNAVAILABLE'
  return { error: { code: status, message: `mock failure ${status}`, status: name } }
}

/** batchEmbedContents: one vector per request, scaled by position so order is visible. */
export function batchEmbedContents(body: any): Response {
  const requests: unknown[] = Array.isArray(body?.requests) ? body.requests : []
  return Response.json({ embeddings: requests.map((_, index) => ({ values: MOCK_VECTOR.map((value) => value * (index + 1)) })) })
}
