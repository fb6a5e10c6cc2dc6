import { type ChatScript, DEFAULT_TEXT, stopAfterChunks, streamEvents, usageOf } from './scripts'

/** OpenAI's Responses API (docs/upstreams.md#openai-responses-api): the response object, or its event sequence with sequence numbers. */

function usage(body: any, script: ChatScript, text: string) {
  const counts = usageOf({ messages: body?.input }, script, text)
  return {
    input_tokens: counts.prompt_tokens,
    input_tokens_details: { cached_tokens: counts.cached_tokens ?? 0, cache_write_tokens: 0 },
    output_tokens: counts.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: counts.prompt_tokens + counts.completion_tokens,
  }
}

function output(script: ChatScript, text: string) {
  return script.toolCalls
    ? script.toolCalls.map((call, index) => ({
        type: 'function_call',
        id: `fc_${index}`,
        call_id: call.id,
        name: call.name,
        arguments: call.arguments,
        status: 'completed',
      }))
    : [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] }]
}

function response(body: any, _script: ChatScript, status: string, items: unknown[], usageObject: unknown) {
  return {
    id: 'resp_mock',
    object: 'response',
    created_at: 1_741_476_542,
    status,
    error: null,
    incomplete_details: null,
    model: body?.model,
    output: items,
    usage: usageObject,
    store: body?.store ?? true,
    metadata: {},
  }
}

export function responses(body: any, script: ChatScript): Response {
  const text = script.text ?? DEFAULT_TEXT
  if (!body?.stream) return Response.json(response(body, script, 'completed', output(script, text), usage(body, script, text)))
  let sequence = 0
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`
  const events = [
    event('response.created', { response: response(body, script, 'in_progress', [], null) }),
    event('response.in_progress', { response: response(body, script, 'in_progress', [], null) }),
  ]
  if (script.toolCalls) {
    script.toolCalls.forEach((call, index) => {
      const item = { type: 'function_call', id: `fc_${index}`, call_id: call.id, name: call.name, arguments: '', status: 'in_progress' }
      events.push(event('response.output_item.added', { output_index: index, item }))
      events.push(event('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: call.arguments }))
      events.push(event('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: call.name, arguments: call.arguments }))
      events.push(event('response.output_item.done', { output_index: index, item: { ...item, arguments: call.arguments, status: 'completed' } }))
    })
  } else {
    events.push(
      event('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'msg_1', status: 'in_progress', role: 'assistant', content: [] } }),
    )
    events.push(
      event('response.content_part.added', { item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
    )
    for (const word of text.split(/(?<= )/))
      events.push(event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: word, logprobs: [] }))
    events.push(event('response.output_text.done', { item_id: 'msg_1', output_index: 0, content_index: 0, text, logprobs: [] }))
    events.push(
      event('response.content_part.done', { item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text, annotations: [] } }),
    )
    events.push(event('response.output_item.done', { output_index: 0, item: output(script, text)[0] }))
  }
  const stop = stopAfterChunks(script)
  const finished = [...events, event('response.completed', { response: response(body, script, 'completed', output(script, text), usage(body, script, text)) })]
  return streamEvents(stop === undefined ? finished : events.slice(0, stop + 2), script)
}
