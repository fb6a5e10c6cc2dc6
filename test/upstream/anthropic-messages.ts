import { splitInTwo } from './openai-chat'
import { type ChatScript, DEFAULT_TEXT, stopAfterChunks, streamEvents, usageOf } from './scripts'

/** Anthropic messages (docs/upstreams.md#anthropic-messages): the message object, or the native event sequence. */

function anthropicUsage(body: any, script: ChatScript, text: string) {
  const usage = usageOf(body, script, text)
  return {
    input_tokens: usage.prompt_tokens,
    cache_creation_input_tokens: (usage.cache_write_tokens ?? 0) + (usage.cache_write_1h_tokens ?? 0),
    cache_read_input_tokens: usage.cached_tokens ?? 0,
    ...(usage.cache_split === false
      ? {}
      : { cache_creation: { ephemeral_5m_input_tokens: usage.cache_write_tokens ?? 0, ephemeral_1h_input_tokens: usage.cache_write_1h_tokens ?? 0 } }),
    output_tokens: usage.completion_tokens,
    ...(usage.web_search_requests ? { server_tool_use: { web_search_requests: usage.web_search_requests, web_fetch_requests: 0 } } : {}),
    service_tier: 'standard',
  }
}

function content(script: ChatScript, text: string) {
  return [
    ...(script.thinking ? [{ type: 'thinking', thinking: script.thinking.text, signature: script.thinking.signature }] : []),
    { type: 'text', text },
    ...(script.toolCalls ?? []).map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.arguments) })),
  ]
}

export function message(body: any, script: ChatScript): Response {
  if (body?.stream) return messageStream(body, script)
  const text = script.text ?? DEFAULT_TEXT
  return Response.json(
    {
      model: body?.model,
      id: 'msg_mock',
      type: 'message',
      role: 'assistant',
      content: content(script, text),
      stop_reason: script.toolCalls ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: anthropicUsage(body, script, text),
    },
    { headers: { 'request-id': 'req_mock' } },
  )
}

function messageStream(body: any, script: ChatScript): Response {
  const text = script.text ?? DEFAULT_TEXT
  const usage = anthropicUsage(body, script, text)
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
  const thinking = script.thinking
  const textIndex = thinking ? 1 : 0
  const events = [
    event('message_start', {
      message: {
        id: 'msg_mock',
        type: 'message',
        role: 'assistant',
        model: body?.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
    ...(thinking
      ? [
          event('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
          event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: thinking.text } }),
          event('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: thinking.signature } }),
          event('content_block_stop', { index: 0 }),
        ]
      : []),
    event('content_block_start', { index: textIndex, content_block: { type: 'text', text: '' } }),
    event('ping', {}),
    ...text.split(/(?<= )/).map((word) => event('content_block_delta', { index: textIndex, delta: { type: 'text_delta', text: word } })),
    event('content_block_stop', { index: textIndex }),
  ]
  script.toolCalls?.forEach((call, position) => {
    const index = textIndex + position + 1
    events.push(
      event('content_block_start', { index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }),
      ...splitInTwo(call.arguments).map((part) => event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } })),
      event('content_block_stop', { index }),
    )
  })
  const stop = stopAfterChunks(script)
  const finished = [
    ...events,
    event('message_delta', {
      delta: { stop_reason: script.toolCalls ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { ...usage, input_tokens: usage.input_tokens },
    }),
    event('message_stop', {}),
  ]
  return streamEvents(stop === undefined ? finished : events.slice(0, stop + 2), script)
}

export function anthropicError(status: number): unknown {
  const type = status === 529 ? 'overloaded_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error'
  return { type: 'error', error: { type, message: `mock failure ${status}` }, request_id: 'req_mock' }
}
