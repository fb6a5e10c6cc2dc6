import { describe, expect, test } from 'bun:test'
import { convertPromptToChat } from '../../src/providers/openai/convert-request'
import { convertChatStream } from '../../src/providers/openai/convert-stream'
import { decodeMessagesRequest, type MessagesPromptSource } from '../../src/surfaces/messages/decode'
import { MessageStreamEncoder } from '../../src/surfaces/messages/encode-stream'
import { translatedParts } from '../support/sse-events'

/** Golden cases: a messages request as the chat request an OpenAI-format route receives. */
const toChat = (body: MessagesPromptSource) => convertPromptToChat(decodeMessagesRequest(body), 'max_tokens')

describe('messages request -> chat completions request', () => {
  test('plain text, system as an array, sampling and stop sequences', () => {
    expect(
      toChat({
        model: 'x',
        max_tokens: 100,
        system: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: 'Be kind.', cache_control: { type: 'ephemeral' } },
        ],
        messages: [{ role: 'user', content: 'Hi' }],
        temperature: 0.5,
        top_p: 0.9,
        stop_sequences: ['END'],
      }),
    ).toEqual({
      messages: [
        { role: 'system', content: 'Be brief.\n\nBe kind.' },
        { role: 'user', content: 'Hi' },
      ],
      max_tokens: 100,
      temperature: 0.5,
      top_p: 0.9,
      stop: ['END'],
    })
  })

  test('multi-turn with tool_use, parallel calls and tool_result turns; thinking is not sent to chat', () => {
    const chat = toChat({
      max_tokens: 50,
      stream: true,
      tools: [
        { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
      ],
      tool_choice: { type: 'any' },
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'two calls', signature: 'sig' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
            { type: 'text', text: 'Thanks!' },
          ],
        },
      ],
    })
    expect(chat).toEqual({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: '24C' },
        { role: 'user', content: 'Thanks!' },
      ],
      // The provider-hosted web search tool runs only on native routes.
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
      tool_choice: 'required',
      max_tokens: 50,
      stream: true,
      stream_options: { include_usage: true },
    })
  })

  test('images, inline and by URL', () => {
    const chat = toChat({
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
            { type: 'text', text: 'Same cat?' },
          ],
        },
      ],
    })
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'text', text: 'Same cat?' },
        ],
      },
    ])
  })

  test('tool_choice for one named tool', () => {
    expect(toChat({ max_tokens: 1, messages: [{ role: 'user', content: 'x' }], tool_choice: { type: 'tool', name: 'f' } }).tool_choice).toEqual({
      type: 'function',
      function: { name: 'f' },
    })
  })
})

function sse(...chunks: object[]): ReadableStream<Uint8Array> {
  const text = [...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), 'data: [DONE]\n\n'].join('')
  return new Response(text).body!
}

async function encodeAll(body: ReadableStream<Uint8Array>): Promise<[string, any][]> {
  const encoder = new MessageStreamEncoder('anthropic/claude-x', 7)
  const events: [string, any][] = []
  for (const part of await translatedParts(convertChatStream(), body)) {
    const produced = part.type === 'finish' ? encoder.finish(part, part.usage!, 0.5) : encoder.encode(part)
    for (const event of produced) events.push([event.event!, JSON.parse(event.data)])
  }
  return events
}

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm' }
const usageChunk = { ...base, choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }

describe('chat completions stream -> messages events', () => {
  test('text, then a tool call whose arguments are split across chunks', async () => {
    const events = await encodeAll(
      sse(
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { content: 'Let me ' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { content: 'check.' }, finish_reason: null }] },
        {
          ...base,
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
              finish_reason: null,
            },
          ],
        },
        { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
        usageChunk,
      ),
    )
    expect(events[0]![1].message.id).toMatch(/^msg_[A-Za-z0-9]{24}$/)
    events[0]![1].message.id = 'msg_x'
    expect(events).toEqual([
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            id: 'msg_x',
            type: 'message',
            role: 'assistant',
            model: 'anthropic/claude-x',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 7, output_tokens: 0 },
          },
        },
      ],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me ' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'check.' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"ci' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'ty":"Paris"}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      [
        'message_delta',
        {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: { input_tokens: 11, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 7, cost: 0.5 },
        },
      ],
      ['message_stop', { type: 'message_stop' }],
    ])
  })

  test('parallel tool calls become consecutive tool_use blocks; length becomes max_tokens', async () => {
    const events = await encodeAll(
      sse(
        {
          ...base,
          choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_a', function: { name: 'f', arguments: '{}' } }] }, finish_reason: null }],
        },
        {
          ...base,
          choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_b', function: { name: 'g', arguments: '{"x":1}' } }] }, finish_reason: null }],
        },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'length' }] },
        usageChunk,
      ),
    )
    const starts = events.filter(([name]) => name === 'content_block_start').map(([, data]) => [data.index, data.content_block.id])
    expect(starts).toEqual([
      [0, 'call_a'],
      [1, 'call_b'],
    ])
    expect(events.find(([name]) => name === 'message_delta')![1].delta.stop_reason).toBe('max_tokens')
  })

  test('a stream that ends without a finish reason is an error, not a silent success', async () => {
    await expect(encodeAll(new Response('data: {"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n').body!)).rejects.toThrow()
  })
})
