import { type ChatScript, DEFAULT_TEXT, stopAfterChunks, streamEvents, usageOf } from './scripts'

/** OpenAI chat completions (docs/upstreams.md#openai-chat-completions): JSON or the chunk stream ending in [DONE]. */

const CREATED = 1_741_569_952

function openAiUsage(body: any, script: ChatScript, text: string) {
  const usage = usageOf(body, script, text)
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  }
}

export function chatCompletion(body: any, script: ChatScript): Response {
  if (body?.stream) return chatStream(body, script)
  const text = script.text ?? DEFAULT_TEXT
  const message = script.toolCalls
    ? {
        role: 'assistant',
        content: null,
        tool_calls: script.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
        refusal: null,
        annotations: [],
      }
    : { role: 'assistant', content: text, refusal: null, annotations: [] }
  const answer = {
    id: 'chatcmpl-mock',
    object: 'chat.completion',
    created: CREATED,
    model: body?.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: script.toolCalls ? 'tool_calls' : 'stop' }],
    ...(script.omitUsage ? {} : { usage: openAiUsage(body, script, text) }),
    service_tier: 'default',
  }
  if (script.silentAfterChunks === undefined) return Response.json(answer)
  // Headers and the first part of the body, then silence with the connection open.
  const json = JSON.stringify(answer)
  return new Response(
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(json.slice(0, json.length / 2)))
      },
    }),
    { headers: { 'content-type': 'application/json' } },
  )
}

function chatStream(body: any, script: ChatScript): Response {
  const text = script.text ?? DEFAULT_TEXT
  const base = { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: CREATED, model: body?.model, system_fingerprint: 'fp_mock' }
  const withUsage = body?.stream_options?.include_usage === true && !script.omitUsage
  const chunk = (delta: object, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(withUsage ? { usage: null } : {}),
  })
  const content: object[] = script.toolCalls
    ? script.toolCalls.flatMap((call, index) => [
        { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
        ...splitInTwo(call.arguments).map((part) => ({ tool_calls: [{ index, function: { arguments: part } }] })),
      ])
    : text.split(/(?<= )/).map((word) => ({ content: word }))
  const data: string[] = [JSON.stringify(chunk({ role: 'assistant', content: '', refusal: null }))]
  content.forEach((delta) => data.push(JSON.stringify(chunk(delta))))
  const stop = stopAfterChunks(script)
  if (stop === undefined) {
    data.push(JSON.stringify(chunk({}, script.toolCalls ? 'tool_calls' : 'stop')))
    if (withUsage) data.push(JSON.stringify({ ...base, choices: [], usage: openAiUsage(body, script, text) }))
    data.push('[DONE]')
  }
  const shown = stop === undefined ? data : data.slice(0, stop + 1)
  return streamEvents(
    shown.map((line) => `data: ${line}\n\n`),
    script,
  )
}

export function splitInTwo(text: string): string[] {
  const middle = Math.floor(text.length / 2)
  return [text.slice(0, middle), text.slice(middle)]
}
