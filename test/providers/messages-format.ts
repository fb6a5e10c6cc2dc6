import type { Answer, StreamPart } from '../../src/canonical/answer'

/**
 * What the adapters that speak Anthropic's messages format (Anthropic, Claude on Vertex) are
 * held to alike: the prompt as a body, the canonical forms of the messages fixtures, and
 * malformed payloads.
 */

/** Stream events written inline for the malformed cases: a good start and end around the one bad event. */
export const messagesEvent = (type: string, data: string) => `event: ${type}\ndata: {"type":"${type}",${data}}\n\n`

export const MESSAGES_START = messagesEvent(
  'message_start',
  '"message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":5,"output_tokens":1}}',
)

export const MESSAGES_END = `${messagesEvent('message_delta', '"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}')}event: message_stop\ndata: {"type":"message_stop"}\n\n`

export const MALFORMED_MESSAGES_STREAMS: [string, string][] = [
  ['an event that is not JSON', `${MESSAGES_START}event: content_block_delta\ndata: {"type":"content_block_delta",\n\n${MESSAGES_END}`],
  [
    'a tool_use block without a name',
    `${MESSAGES_START}${messagesEvent('content_block_start', '"index":0,"content_block":{"type":"tool_use","id":"toolu_1","input":{}}')}${MESSAGES_END}`,
  ],
  [
    'a text delta that is not text',
    `${MESSAGES_START}${messagesEvent('content_block_delta', '"index":0,"delta":{"type":"text_delta","text":7}')}${MESSAGES_END}`,
  ],
  ['a delta without its block index', `${MESSAGES_START}${messagesEvent('content_block_delta', '"delta":{"type":"text_delta","text":"hi"}')}${MESSAGES_END}`],
  [
    'a message_delta without its delta',
    `${MESSAGES_START}${messagesEvent('message_delta', '"usage":{"output_tokens":3}')}event: message_stop\ndata: {"type":"message_stop"}\n\n`,
  ],
  ['a message_start without its message', `${messagesEvent('message_start', '"id":"msg_1"')}${MESSAGES_END}`],
]

export const MALFORMED_MESSAGES_ANSWERS: [string, unknown][] = [
  ['not an object', ['msg']],
  ['no content', { id: 'msg_1', type: 'message', stop_reason: 'end_turn' }],
  ['content that is not a list', { id: 'msg_1', content: 'hello', stop_reason: 'end_turn' }],
  ['a block without a type', { id: 'msg_1', content: [{ text: 'hello' }], stop_reason: 'end_turn' }],
  ['a text block whose text is not text', { id: 'msg_1', content: [{ type: 'text', text: 42 }], stop_reason: 'end_turn' }],
  ['a tool_use block without an id', { id: 'msg_1', content: [{ type: 'tool_use', name: 'f', input: {} }], stop_reason: 'tool_use' }],
  ['a thinking block without its thinking', { id: 'msg_1', content: [{ type: 'thinking', signature: 'x' }], stop_reason: 'end_turn' }],
  ['usage that is not an object', { id: 'msg_1', content: [], stop_reason: 'end_turn', usage: 12 }],
]

/** The prompt as a messages body (without `model`, which each adapter places its own way). */
export const PROMPT_AS_MESSAGES = {
  system: 'Be brief.',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'Sunny, 21 C' }] },
  ],
  max_tokens: 256,
  tools: [{ name: 'get_weather', description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
  tool_choice: { type: 'auto' },
  temperature: 0.2,
  stop_sequences: ['END'],
}

export const MESSAGE_ANSWER: Answer = {
  id: 'msg_012foMGXNQ1eqhaq3QvA5dY6',
  content: [
    { type: 'reasoning', text: 'The user wants the tool run with "test".', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
    { type: 'text', text: 'I\'ll use the test_tool with the value "test" as requested, then provide a final response.' },
    { type: 'tool-call', id: 'toolu_011LF2VkWpAfJnTKJcmh1PNf', name: 'test_tool', input: { value: 'test' } },
  ],
  finishReason: 'tool-calls',
  usage: { inputTokens: 415, outputTokens: 76, cacheReadTokens: 300, cacheWriteTokens: 12, cacheWrite1hTokens: 0, webSearchRequests: 1 },
}

export const TEXT_STREAM_PARTS: StreamPart[] = [
  { type: 'start', id: 'msg_01Stop' },
  { type: 'reasoning-delta', text: 'Simple educ' },
  { type: 'reasoning-signature', signature: 'c3ludGhldGlj' },
  { type: 'text-delta', text: 'One, two' },
  { type: 'text-delta', text: ', three' },
  {
    type: 'finish',
    finishReason: 'stop-sequence',
    stopSequence: 'four',
    usage: { inputTokens: 25, outputTokens: 9, cacheReadTokens: 10, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
  },
]

export const TOOL_STREAM_PARTS: StreamPart[] = [
  { type: 'start', id: 'msg_019Q1hrJbZG26Fb9BQhrkHEr' },
  { type: 'text-delta', text: "I'll check the current weather in Paris for you." },
  { type: 'tool-call-start', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather' },
  { type: 'tool-call-delta', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', argumentsDelta: '' },
  { type: 'tool-call-delta', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', argumentsDelta: '{"locati' },
  { type: 'tool-call-delta', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', argumentsDelta: 'on": "Paris"}' },
  // message_delta repeats the input counts and sends null cache counts: nulls keep message_start's.
  {
    type: 'finish',
    finishReason: 'tool-calls',
    usage: { inputTokens: 377, outputTokens: 65, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
  },
]

/** A native body with every option priced above the catalogue, and what must remain of it. */
export const PREMIUM_MESSAGES_BODY = {
  model: 'client-model',
  max_tokens: 100,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
  speed: 'fast',
  service_tier: 'auto',
  inference_geo: 'us',
  stream: true,
}
export const CATALOGUE_MESSAGES_BODY = {
  max_tokens: 100,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
  stream: true,
}
