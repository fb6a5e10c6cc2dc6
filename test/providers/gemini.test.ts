import { describe, expect, test } from 'bun:test'
import { createAdapters } from '../../src/providers/registry'
import { translatedParts } from '../support/sse-events'
import { providerConfig, runProviderContract } from './contract'
import { fakeFetch } from './fake-fetch'
import { chunkedStream } from './fixtures'
import { PROMPT } from './prompt'

const BASE = 'https://generativelanguage.googleapis.test'
const chunk = (json: string) => `data: ${json}\r\n\r\n`
/** The rest of a well-formed stream, so that only the malformed chunk before it can fail one. */
const END = chunk(
  '{"candidates":[{"content":{"role":"model","parts":[{"text":"."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}',
)
/** answer.json's usageMetadata: tool-use prompt tokens are input; thoughts are output; cached tokens are inside the prompt. */
const USAGE_OF_ANSWER = { inputTokens: 65, outputTokens: 32, cacheReadTokens: 40, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 }
const FIRST = chunk('{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}],"responseId":"r1"}')

runProviderContract({
  api: 'gemini',
  provider: providerConfig({ api: 'gemini', baseUrl: BASE, credential: 'gemini-provider-key' }),
  groups: ['generateContent', 'translate', 'embeddings'],
  absent: {
    chat: 'Gemini is reached by translation: its OpenAI-compatible endpoint is not used',
    messages: 'Gemini has no messages endpoint: messages clients reach it by translation',
    responses: 'Gemini has no Responses API: Responses clients reach it by translation',
    media: "OpenAI's media endpoints are OpenAI's alone",
    video: 'Veo is reached through Vertex AI, not the Gemini API',
  },

  generateContent: {
    body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 64, thinkingConfig: { thinkingBudget: 32 } } },
    request: {
      url: `${BASE}/v1beta/models/model-x:generateContent`,
      headers: { 'x-goog-api-key': 'gemini-provider-key', 'content-type': 'application/json' },
      absentHeaders: ['authorization'],
      body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 64, thinkingConfig: { thinkingBudget: 32 } } },
    },
    usage: { fixture: 'answer', field: 'usageMetadata', expected: USAGE_OF_ANSWER },
    countField: 'candidatesTokenCount',
  },

  translate: {
    prompt: PROMPT,
    request: {
      url: `${BASE}/v1beta/models/model-x:generateContent`,
      headers: { 'x-goog-api-key': 'gemini-provider-key', 'content-type': 'application/json' },
      absentHeaders: ['authorization'],
      body: {
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
          { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
          // Gemini answers a function by its name: the call id is matched back to it.
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'Sunny, 21 C' } } }] },
        ],
        systemInstruction: { role: 'user', parts: [{ text: 'Be brief.' }] },
        generationConfig: { temperature: 0.2, maxOutputTokens: 256, stopSequences: ['END'] },
        tools: [
          {
            functionDeclarations: [
              { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      },
    },
    streamRequest: { url: `${BASE}/v1beta/models/model-x:streamGenerateContent?alt=sse`, headers: { 'x-goog-api-key': 'gemini-provider-key' } },
    answer: {
      fixture: 'answer',
      expected: {
        id: 'jC77aI_PD-v8698Pl73V0QY',
        content: [
          { type: 'reasoning', text: 'Thinking about the weather.' },
          { type: 'text', text: 'Let me look.' },
          { type: 'tool-call', id: 'call_0', name: 'get_weather', input: { city: 'Paris' } },
        ],
        // STOP with a function call is a tool call: Gemini has no reason of its own for it.
        finishReason: 'tool-calls',
        // Tool-use prompt tokens are input; thoughts are output; cached tokens are inside the prompt.
        usage: USAGE_OF_ANSWER,
      },
    },
    streams: [
      {
        fixture: 'stream-text',
        expected: [
          { type: 'start', id: 'Xr3aaKmFLp3n698P5Nq0-Q0' },
          { type: 'text-delta', text: 'The sky' },
          { type: 'text-delta', text: ' is blue' },
          { type: 'text-delta', text: '.' },
          // Cumulative usage: the last chunk's counts, not a sum.
          {
            type: 'finish',
            finishReason: 'stop',
            usage: { inputTokens: 6, outputTokens: 8, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
          },
        ],
      },
      {
        fixture: 'stream-function-calls',
        expected: [
          { type: 'start', id: 'vtx-fn-1' },
          { type: 'text-delta', text: 'Checking' },
          { type: 'tool-call-start', id: 'call_0', name: 'get_weather' },
          { type: 'tool-call-delta', id: 'call_0', argumentsDelta: '{"city":"Oslo"}' },
          { type: 'tool-call-start', id: 'fc_7', name: 'get_time' },
          { type: 'tool-call-delta', id: 'fc_7', argumentsDelta: '{}' },
          {
            type: 'finish',
            finishReason: 'tool-calls',
            usage: { inputTokens: 30, outputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
          },
        ],
      },
    ],
    streamError: 'stream-error',
    malformedAnswers: [
      ['not an object', 'upstream connect error'],
      ['neither a candidate nor a blocked prompt', { responseId: 'r1', usageMetadata: { promptTokenCount: 3 } }],
      ['candidates that are not a list', { candidates: { content: { parts: [{ text: 'hi' }] } } }],
      ['text that is not text', { candidates: [{ content: { parts: [{ text: 5 }] }, finishReason: 'STOP' }] }],
      ['a function call without a name', { candidates: [{ content: { parts: [{ functionCall: { args: {} } }] }, finishReason: 'STOP' }] }],
      ['usage metadata that is not an object', { candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }], usageMetadata: 'lots' }],
    ],
    malformedStreams: [
      ['a chunk that is not JSON', `${FIRST}data: {"candidates":\r\n\r\n${END}`],
      ['candidates that are not a list', `${FIRST}${chunk('{"candidates":"hi"}')}${END}`],
      ['parts that are not a list', `${FIRST}${chunk('{"candidates":[{"content":{"parts":{"text":"hi"}}}]}')}${END}`],
      ['a function call without a name', `${FIRST}${chunk('{"candidates":[{"content":{"parts":[{"functionCall":{"args":{}}}]}}]}')}${END}`],
    ],
  },

  embeddings: {
    texts: ['alpha', 'beta'],
    dimensions: 3,
    request: {
      url: `${BASE}/v1beta/models/model-x:batchEmbedContents`,
      headers: { 'x-goog-api-key': 'gemini-provider-key', 'content-type': 'application/json' },
      body: {
        requests: [
          { model: 'models/model-x', content: { parts: [{ text: 'alpha' }] }, outputDimensionality: 3 },
          { model: 'models/model-x', content: { parts: [{ text: 'beta' }] }, outputDimensionality: 3 },
        ],
      },
    },
    answer: {
      fixture: 'embeddings',
      expected: [
        [0.013168523, -0.008711934, -0.046782676],
        [0.0049573793, -0.01840327, 0.02281209],
      ],
    },
    malformed: [
      ['no embeddings', {}],
      ['an embedding without values', { embeddings: [{}] }],
      ['values that are not numbers', { embeddings: [{ values: ['0.1'] }] }],
    ],
  },

  errors: [
    {
      status: 404,
      fixture: 'error-not-found',
      expected: {
        upstreamError: false,
        status: 404,
        code: 'not_found',
        message: 'models/custom-gemini-2.0-flash is not found for API version v1beta, or is not supported for generateContent.',
      },
    },
    { status: 400, fixture: 'error-invalid-argument', expected: { upstreamError: false, status: 400, code: 'invalid_argument' } },
    { status: 429, fixture: 'error-resource-exhausted', expected: { upstreamError: true, status: 502, code: 'upstream_error' } },
  ],

  config: { invalid: [] },
})

describe('gemini adapter: blocked prompts', () => {
  const blocked = {
    promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] },
    usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
    responseId: 'blocked-1',
  }

  test('a whole answer without a candidate but with a block reason is an empty, filtered answer', () => {
    const answer = createAdapters(fakeFetch().fetch).gemini.translate?.readAnswer(blocked)
    expect(answer).toEqual({
      id: 'blocked-1',
      content: [],
      finishReason: 'content-filter',
      usage: { inputTokens: 9, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
    })
  })

  test('a stream of one blocked chunk finishes, filtered', async () => {
    const translate = createAdapters(fakeFetch().fetch).gemini.translate
    if (!translate) throw new Error('gemini translates')
    const parts = await translatedParts(translate.readStream(), chunkedStream(`data: ${JSON.stringify(blocked)}\r\n\r\n`))
    expect(parts.map((part) => part.type)).toEqual(['start', 'finish'])
    expect(parts.at(-1)).toMatchObject({ finishReason: 'content-filter' })
  })
})
