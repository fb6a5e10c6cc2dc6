import { providerConfig, runProviderContract } from './contract'
import {
  CATALOGUE_MESSAGES_BODY,
  MALFORMED_MESSAGES_ANSWERS,
  MALFORMED_MESSAGES_STREAMS,
  MESSAGE_ANSWER,
  PREMIUM_MESSAGES_BODY,
  PROMPT_AS_MESSAGES,
  TEXT_STREAM_PARTS,
  TOOL_STREAM_PARTS,
} from './messages-format'
import { PROMPT } from './prompt'

const BASE = 'https://api.anthropic.test'

runProviderContract({
  api: 'anthropic',
  provider: providerConfig({ api: 'anthropic', baseUrl: BASE, credential: 'sk-ant-provider' }),
  groups: ['messages', 'translate'],
  absent: {
    generateContent: "Google's generateContent format is Gemini's: the Gemini surface reaches Anthropic by translation",
    chat: 'Anthropic has no chat completions endpoint: chat clients reach it by translation',
    responses: 'Anthropic has no Responses API: Responses clients reach it by translation',
    embeddings: 'Anthropic offers no embeddings',
    media: "OpenAI's media endpoints are OpenAI's alone",
    video: 'Anthropic offers no video generation',
  },

  translate: {
    prompt: PROMPT,
    request: {
      url: `${BASE}/v1/messages`,
      headers: { 'x-api-key': 'sk-ant-provider', 'anthropic-version': '2023-06-01', 'content-type': 'application/json', accept: 'application/json' },
      absentHeaders: ['authorization', 'anthropic-beta'],
      body: { ...PROMPT_AS_MESSAGES, model: 'model-x' },
    },
    streamRequest: { url: `${BASE}/v1/messages`, headers: { 'x-api-key': 'sk-ant-provider', accept: 'text/event-stream' } },
    answer: { fixture: 'message-answer', expected: MESSAGE_ANSWER },
    streams: [
      { fixture: 'message-stream-text', expected: TEXT_STREAM_PARTS },
      { fixture: 'message-stream-tool-use', expected: TOOL_STREAM_PARTS },
    ],
    streamError: 'message-stream-error',
    malformedAnswers: MALFORMED_MESSAGES_ANSWERS,
    malformedStreams: MALFORMED_MESSAGES_STREAMS,
  },

  messages: {
    body: PREMIUM_MESSAGES_BODY,
    passthrough: { version: '2026-10-21', beta: 'context-1m-2025-08-07,prompt-caching-2024-07-31', query: '?beta=true' },
    request: {
      url: `${BASE}/v1/messages?beta=true`,
      headers: {
        'x-api-key': 'sk-ant-provider',
        'anthropic-version': '2026-10-21',
        'anthropic-beta': 'prompt-caching-2024-07-31',
        accept: 'text/event-stream',
      },
      body: { ...CATALOGUE_MESSAGES_BODY, model: 'model-x' },
    },
    usage: { fixture: 'message-answer', field: 'usage', expected: MESSAGE_ANSWER.usage },
    countField: 'cache_read_input_tokens',
  },

  errors: [
    { status: 404, fixture: 'error-not-found', expected: { upstreamError: false, status: 404, code: 'upstream_error', message: 'model: claude-foo' } },
    {
      status: 400,
      fixture: 'error-with-code',
      expected: { upstreamError: false, status: 400, code: 'context_length_exceeded', message: 'prompt is too long: 215000 tokens > 200000 maximum' },
    },
    {
      status: 529,
      fixture: 'error-overloaded',
      expected: { upstreamError: true, status: 502, code: 'upstream_error', message: 'The upstream provider failed (HTTP 529).' },
    },
  ],

  config: { invalid: [] },
})
