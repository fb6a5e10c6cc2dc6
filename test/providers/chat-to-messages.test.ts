import { describe, expect, test } from 'bun:test'
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../src/canonical/prompt'
import { convertPromptToMessages } from '../../src/providers/anthropic/convert-request'
import { convertMessagesStream } from '../../src/providers/anthropic/convert-stream'
import { type ChatPromptSource, decodeChatRequest } from '../../src/surfaces/chat-completions/decode'
import { ChatStreamEncoder } from '../../src/surfaces/chat-completions/encode-stream'
import { translatedParts } from '../support/sse-events'

/** Golden cases: a chat completions request as the messages request an Anthropic route receives. */
const toMessages = (body: ChatPromptSource) => convertPromptToMessages(decodeChatRequest(body))

describe('chat completions request -> messages request', () => {
  test('system and developer messages, sampling, stop as a string, max_completion_tokens', () => {
    expect(
      toMessages({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] },
          { role: 'user', content: 'Hi' },
        ],
        max_completion_tokens: 300,
        temperature: 1.7,
        stop: 'END',
      }),
    ).toEqual({
      system: 'Be brief.\n\nUse French.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      max_tokens: 300,
      // The messages API takes temperatures up to 1.
      temperature: 1,
      stop_sequences: ['END'],
    })
  })

  test('tool calls and consecutive tool results become tool_use and one tool_result turn', () => {
    const body = toMessages({
      stream: true,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      tool_choice: 'required',
      messages: [
        { role: 'user', content: 'Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        { role: 'tool', tool_call_id: 'call_2', content: '24C' },
      ],
    })
    expect(body).toEqual({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Paris and Rome?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
            { type: 'tool_result', tool_use_id: 'call_2', content: '24C' },
          ],
        },
      ],
      // No number and no model maximum known: the default the hold assumed, never a smaller one.
      max_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
      tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any' },
      stream: true,
    })
  })

  test('images: data URLs become base64 sources, others URL sources', () => {
    const body = toMessages({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
            { type: 'image_url', image_url: { url: 'https://example.com/b.png' } },
          ],
        },
      ],
    })
    expect((body.messages as any[])[0].content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/b.png' } },
    ])
  })
})

describe('messages stream -> chat chunks', () => {
  test('text, a tool call split across input_json_delta events, usage with cost', async () => {
    const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
    const upstream = new Response(
      [
        event('message_start', { message: { id: 'msg_1', usage: { input_tokens: 20, cache_read_input_tokens: 5, output_tokens: 1 } } }),
        event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        event('ping', {}),
        event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Sure.' } }),
        event('content_block_stop', { index: 0 }),
        event('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } }),
        event('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"a"' } }),
        event('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: ':1}' } }),
        event('content_block_stop', { index: 1 }),
        event('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }),
        event('message_stop', {}),
      ].join(''),
    ).body!
    const encoder = new ChatStreamEncoder('anthropic/claude-x', true)
    const chunks: any[] = []
    for (const part of await translatedParts(convertMessagesStream(), upstream)) {
      const events = part.type === 'finish' ? encoder.finish(part, part.usage!, 0.25) : encoder.encode(part)
      for (const event of events) chunks.push(event.data === '[DONE]' ? '[DONE]' : JSON.parse(event.data))
    }
    expect(
      chunks.map((chunk) => (chunk === '[DONE]' ? chunk : { delta: chunk.choices[0]?.delta, finish: chunk.choices[0]?.finish_reason, usage: chunk.usage })),
    ).toEqual([
      { delta: { role: 'assistant', content: '' }, finish: null, usage: undefined },
      { delta: { content: 'Sure.' }, finish: null, usage: undefined },
      { delta: { tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '' } }] }, finish: null, usage: undefined },
      { delta: { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] }, finish: null, usage: undefined },
      { delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish: null, usage: undefined },
      { delta: {}, finish: 'tool_calls', usage: undefined },
      {
        delta: undefined,
        finish: undefined,
        usage: { prompt_tokens: 25, completion_tokens: 9, total_tokens: 34, prompt_tokens_details: { cached_tokens: 5 }, cost: 0.25 },
      },
      '[DONE]',
    ])
    expect(chunks.slice(0, -1).every((chunk) => chunk.model === 'anthropic/claude-x' && chunk.object === 'chat.completion.chunk')).toBe(true)
  })
})
