import { providerConfig, runProviderContract } from './contract'
import { fixtureText, jsonResponse } from './fixtures'
import { PROMPT } from './prompt'

const BASE = 'https://api.openai.test/v1'
const CHUNK = (fields: string) => `data: {"id":"c1","object":"chat.completion.chunk",${fields}}\n\n`
/** The rest of a well-formed stream, so that only the malformed chunk before it can fail one. */
const END = `${CHUNK('"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]')}data: [DONE]\n\n`

runProviderContract({
  api: 'openai',
  provider: providerConfig({ api: 'openai', baseUrl: BASE, credential: 'sk-provider' }),
  groups: ['chat', 'responses', 'translate', 'media', 'video'],
  absent: {
    generateContent: "Google's generateContent format is Gemini's: the Gemini surface reaches OpenAI-format routes by translation",
    messages: "OpenAI's API has no messages endpoint: messages clients reach it by translation",
    embeddings: 'OpenAI embeddings are spoken natively through the media group (/embeddings)',
  },

  translate: {
    prompt: PROMPT,
    request: {
      url: `${BASE}/chat/completions`,
      headers: { authorization: 'Bearer sk-provider', 'content-type': 'application/json', accept: 'application/json' },
      body: {
        model: 'model-x',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 21 C' },
        ],
        tools: [
          {
            type: 'function',
            function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
          },
        ],
        tool_choice: 'auto',
        max_tokens: 256,
        temperature: 0.2,
        stop: ['END'],
      },
    },
    streamRequest: { url: `${BASE}/chat/completions`, headers: { authorization: 'Bearer sk-provider', accept: 'text/event-stream' } },
    answer: {
      fixture: 'chat-answer',
      expected: {
        id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
        content: [
          { type: 'text', text: 'Let me check the weather in Boston.' },
          { type: 'tool-call', id: 'call_abc123', name: 'get_current_weather', input: { location: 'Boston, MA' } },
        ],
        finishReason: 'tool-calls',
        usage: { inputTokens: 18, outputTokens: 17, cacheReadTokens: 64, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
      },
    },
    streams: [
      {
        fixture: 'chat-stream-text',
        expected: [
          { type: 'start', id: 'chatcmpl-9tZXFsqeQOozn5YU8I6SbjkmDnN76' },
          { type: 'text-delta', text: 'San' },
          { type: 'text-delta', text: ' Francisco' },
          {
            type: 'finish',
            finishReason: 'stop',
            usage: { inputTokens: 17, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
          },
        ],
      },
      {
        fixture: 'chat-stream-tool-calls',
        expected: [
          { type: 'start', id: 'chatcmpl-tools1' },
          { type: 'tool-call-start', id: 'call_abc', name: 'get_weather' },
          { type: 'tool-call-delta', id: 'call_abc', argumentsDelta: '{"city":' },
          { type: 'tool-call-start', id: 'call_def', name: 'get_time' },
          { type: 'tool-call-delta', id: 'call_def', argumentsDelta: '{}' },
          { type: 'tool-call-delta', id: 'call_abc', argumentsDelta: '"Paris"}' },
          {
            type: 'finish',
            finishReason: 'tool-calls',
            usage: { inputTokens: 20, outputTokens: 31, cacheReadTokens: 100, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
          },
        ],
      },
    ],
    streamError: 'chat-stream-error',
    malformedAnswers: [
      ['not an object', 'Internal Server Error'],
      ['no choices', { id: 'chatcmpl-1', choices: [] }],
      ['choices not an array', { id: 'chatcmpl-1', choices: { message: { content: 'hi' } } }],
      ['a choice without a message', { id: 'chatcmpl-1', choices: [{ finish_reason: 'stop' }] }],
      ['content of the wrong type', { id: 'chatcmpl-1', choices: [{ message: { content: 42 }, finish_reason: 'stop' }] }],
      [
        'a tool call without an id',
        { id: 'chatcmpl-1', choices: [{ message: { content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] } }] },
      ],
      ['usage that is not an object', { id: 'chatcmpl-1', choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }], usage: 'lots' }],
    ],
    malformedStreams: [
      ['a chunk that is not JSON', `${CHUNK('"choices":[{"index":0,"delta":{"content":"a"}}]')}data: {not json\n\n${END}`],
      ['a chunk without choices', `${CHUNK('"choices":[{"index":0,"delta":{"content":"a"}}]')}${CHUNK('"usage":null')}${END}`],
      ['a delta of the wrong type', `${CHUNK('"choices":[{"index":0,"delta":{"content":["a"]}}]')}${END}`],
      ['tool call arguments before the call', `${CHUNK('"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]')}${END}`],
      [
        'a tool call without a name',
        `${CHUNK('"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"arguments":""}}]}}]')}${END}`,
      ],
    ],
  },

  chat: {
    body: { model: 'client-model', messages: [{ role: 'user', content: 'hi' }], service_tier: 'priority', stream: true },
    request: {
      url: `${BASE}/chat/completions`,
      headers: { authorization: 'Bearer sk-provider', accept: 'text/event-stream', 'content-type': 'application/json' },
      body: { model: 'model-x', messages: [{ role: 'user', content: 'hi' }], stream: true },
    },
    usage: {
      fixture: 'chat-answer',
      field: 'usage',
      expected: { inputTokens: 18, outputTokens: 17, cacheReadTokens: 64, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
    },
    countField: 'completion_tokens',
  },

  responses: {
    body: {
      model: 'client-model',
      input: 'hi',
      service_tier: 'flex',
      tools: [{ type: 'web_search_preview' }, { type: 'function', name: 'f', parameters: {} }],
      tool_choice: { type: 'web_search_preview' },
    },
    request: {
      url: `${BASE}/responses`,
      headers: { authorization: 'Bearer sk-provider', 'content-type': 'application/json' },
      body: { model: 'model-x', input: 'hi', tools: [{ type: 'function', name: 'f', parameters: {} }] },
    },
    usage: {
      fixture: 'responses-answer',
      field: 'usage',
      expected: { inputTokens: 16, outputTokens: 87, cacheReadTokens: 20, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
    },
    countField: 'input_tokens',
  },

  media: {
    cases: [
      {
        path: '/embeddings',
        body: () => JSON.stringify({ model: 'text-embedding-3-small', input: ['a'] }),
        request: {
          url: `${BASE}/embeddings`,
          headers: { authorization: 'Bearer sk-provider', 'content-type': 'application/json' },
          body: { model: 'text-embedding-3-small', input: ['a'] },
        },
      },
      {
        path: '/audio/transcriptions',
        body: () => {
          const form = new FormData()
          form.append('model', 'whisper-1')
          form.append('file', new File([new Uint8Array([1, 2, 3])], 'a.mp3', { type: 'audio/mpeg' }))
          return form
        },
        // A form sets its own multipart boundary: no JSON content type may be forced on it.
        request: {
          url: `${BASE}/audio/transcriptions`,
          headers: { authorization: 'Bearer sk-provider' },
          absentHeaders: ['content-type'],
          form: { model: 'whisper-1' },
        },
      },
    ],
  },

  video: {
    request: { prompt: 'A calico cat playing a piano on stage', durationSeconds: 8, size: '1280x720' },
    finished: () => [
      jsonResponse('openai', 'video-queued'),
      jsonResponse('openai', 'video-in-progress'),
      jsonResponse('openai', 'video-completed'),
      new Response(new Uint8Array([0, 0, 0, 24, 102, 116, 121, 112]), { headers: { 'content-type': 'video/mp4' } }),
    ],
    requests: [
      {
        url: `${BASE}/videos`,
        headers: { authorization: 'Bearer sk-provider' },
        form: { model: 'model-x', prompt: 'A calico cat playing a piano on stage', seconds: '8', size: '1280x720' },
      },
      { method: 'GET', url: `${BASE}/videos/video_123`, headers: { authorization: 'Bearer sk-provider' } },
      { method: 'GET', url: `${BASE}/videos/video_123`, headers: { authorization: 'Bearer sk-provider' } },
      { method: 'GET', url: `${BASE}/videos/video_123/content`, headers: { authorization: 'Bearer sk-provider', accept: 'application/binary' } },
    ],
    jobId: 'video_123',
    outcome: { kind: 'video', data: Buffer.from([0, 0, 0, 24, 102, 116, 121, 112]).toString('base64'), mimeType: 'video/mp4', durationSeconds: 8 },
    blocked: {
      responses: () => [jsonResponse('openai', 'video-queued'), jsonResponse('openai', 'video-moderated')],
      reason: 'Your request was blocked by our moderation system.',
    },
    malformed: () => [jsonResponse('openai', 'video-queued'), jsonResponse('openai', 'video-unknown-status')],
    cancel: {
      request: { method: 'DELETE', url: `${BASE}/videos/video_123`, headers: { authorization: 'Bearer sk-provider' } },
      refused: { response: () => new Response(fixtureText('openai', 'video-not-deletable.json'), { status: 400 }), status: 400, code: 'video_not_deletable' },
    },
  },

  errors: [
    {
      status: 404,
      fixture: 'error-model-not-found',
      expected: { upstreamError: false, status: 404, code: 'model_not_found', message: 'The model `gpt-9` does not exist or you do not have access to it.' },
    },
    // vLLM puts the HTTP status in `code`: a number is not a code.
    {
      status: 400,
      fixture: 'error-numeric-code',
      expected: { upstreamError: false, status: 400, code: 'upstream_error', message: 'max_tokens must be at least 1, got -5.' },
    },
    // The upstream's load, not the client's fault: the gateway's own error, without the upstream's words.
    {
      status: 429,
      fixture: 'error-rate-limit',
      expected: { upstreamError: true, status: 502, code: 'upstream_error', message: 'The upstream provider failed (HTTP 429).' },
    },
  ],

  config: { invalid: [] },
})
