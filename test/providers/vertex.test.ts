import { describe, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { createAdapters } from '../../src/providers/registry'
import { providerConfig, runProviderContract } from './contract'
import { fakeFetch } from './fake-fetch'
import { jsonResponse } from './fixtures'
import { CATALOGUE_MESSAGES_BODY, MALFORMED_MESSAGES_ANSWERS, MALFORMED_MESSAGES_STREAMS, PREMIUM_MESSAGES_BODY, PROMPT_AS_MESSAGES } from './messages-format'
import { PROMPT } from './prompt'

const BASE = 'https://us-east5-aiplatform.googleapis.test'
const CLAUDE = `${BASE}/v1/projects/proj/locations/us-east5/publishers/anthropic/models/model-x`
const VEO = `${BASE}/v1/projects/proj/locations/us-east5/publishers/google/models/model-x`
const OPERATION = 'projects/proj/locations/us-east5/publishers/google/models/model-x/operations/5a3c7e9b-1111-4d2e-9c7f-000000000001'
const PROVIDER = providerConfig({ api: 'vertex', baseUrl: BASE, project: 'proj', location: 'us-east5', credential: 'vertex-access-token' })
const NEEDS_PROJECT = { field: '', message: 'vertex providers need "project" and "location"' }

runProviderContract({
  api: 'vertex',
  provider: PROVIDER,
  groups: ['messages', 'translate', 'video'],
  absent: {
    generateContent: 'Gemini models on Vertex AI are not served yet: the Gemini surface reaches Claude on Vertex by translation',
    chat: 'Claude on Vertex speaks messages only: chat clients reach it by translation',
    responses: 'Claude on Vertex has no Responses API: Responses clients reach it by translation',
    embeddings: 'embeddings on Vertex are not routed: Gemini embeddings go through the Gemini API',
    media: "OpenAI's media endpoints are OpenAI's alone",
  },

  translate: {
    prompt: PROMPT,
    request: {
      url: `${CLAUDE}:rawPredict`,
      headers: { authorization: 'Bearer vertex-access-token', 'content-type': 'application/json', accept: 'application/json' },
      // The URL names the model; the API version goes in the body, not a header.
      absentHeaders: ['x-api-key', 'anthropic-version'],
      body: { ...PROMPT_AS_MESSAGES, anthropic_version: 'vertex-2023-10-16' },
    },
    streamRequest: { url: `${CLAUDE}:streamRawPredict`, headers: { authorization: 'Bearer vertex-access-token', accept: 'text/event-stream' } },
    answer: {
      fixture: 'raw-predict-answer',
      expected: {
        id: 'msg_vrtx_01PeJ2cUnDHwGk8bYnLZh6yD',
        content: [{ type: 'text', text: 'Bonjour!' }],
        finishReason: 'stop',
        usage: { inputTokens: 14, outputTokens: 6, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
      },
    },
    streams: [
      {
        fixture: 'raw-predict-stream',
        expected: [
          { type: 'start', id: 'msg_vrtx_01Stream' },
          { type: 'tool-call-start', id: 'toolu_vrtx_01', name: 'get_weather' },
          { type: 'tool-call-delta', id: 'toolu_vrtx_01', argumentsDelta: '{"city": "Oslo"}' },
          {
            type: 'finish',
            finishReason: 'tool-calls',
            usage: { inputTokens: 40, outputTokens: 22, cacheReadTokens: 0, cacheWriteTokens: 8, cacheWrite1hTokens: 0, webSearchRequests: 0 },
          },
        ],
      },
    ],
    streamError: 'raw-predict-stream-error',
    malformedAnswers: MALFORMED_MESSAGES_ANSWERS,
    malformedStreams: MALFORMED_MESSAGES_STREAMS,
  },

  messages: {
    body: PREMIUM_MESSAGES_BODY,
    passthrough: { version: '2023-06-01', beta: 'fast-mode-2026-01-01,interleaved-thinking-2025-05-14', query: '?beta=true' },
    request: {
      url: `${CLAUDE}:streamRawPredict`,
      headers: { authorization: 'Bearer vertex-access-token', 'anthropic-beta': 'interleaved-thinking-2025-05-14', accept: 'text/event-stream' },
      absentHeaders: ['anthropic-version'],
      body: { ...CATALOGUE_MESSAGES_BODY, anthropic_version: 'vertex-2023-10-16' },
    },
    usage: {
      fixture: 'raw-predict-answer',
      field: 'usage',
      expected: { inputTokens: 14, outputTokens: 6, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, webSearchRequests: 0 },
    },
    countField: 'output_tokens',
  },

  video: {
    request: { prompt: 'a cat', durationSeconds: 8, aspectRatio: '16:9' },
    finished: () => [jsonResponse('vertex', 'veo-started'), jsonResponse('vertex', 'veo-running'), jsonResponse('vertex', 'veo-done')],
    requests: [
      {
        url: `${VEO}:predictLongRunning`,
        headers: { authorization: 'Bearer vertex-access-token', 'content-type': 'application/json' },
        body: { instances: [{ prompt: 'a cat' }], parameters: { sampleCount: 1, durationSeconds: 8, aspectRatio: '16:9' } },
      },
      { url: `${VEO}:fetchPredictOperation`, headers: { authorization: 'Bearer vertex-access-token' }, body: { operationName: OPERATION } },
      { url: `${VEO}:fetchPredictOperation`, headers: { authorization: 'Bearer vertex-access-token' }, body: { operationName: OPERATION } },
    ],
    jobId: OPERATION,
    outcome: { kind: 'video', data: 'AAAAGGZ0eXBtcDQy', mimeType: 'video/mp4' },
    blocked: {
      responses: () => [jsonResponse('vertex', 'veo-started'), jsonResponse('vertex', 'veo-filtered')],
      reason: 'Unable to show generated videos that violate our policies.',
    },
    malformed: () => [jsonResponse('vertex', 'veo-started'), jsonResponse('vertex', 'veo-done-without-clip')],
    cancel: null,
  },

  errors: [
    {
      status: 400,
      fixture: 'error-invalid-request',
      expected: {
        upstreamError: false,
        status: 400,
        code: 'upstream_error',
        message: 'max_tokens: 1000000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929',
      },
    },
    // Vertex itself answers in Google's envelope: its message is kept, its numeric code is not a code.
    {
      status: 404,
      fixture: 'error-google-not-found',
      expected: {
        upstreamError: false,
        status: 404,
        code: 'upstream_error',
        message: 'Publisher Model `projects/proj/locations/us-east5/publishers/anthropic/models/claude-nope` not found.',
      },
    },
    { status: 503, fixture: 'error-unavailable', expected: { upstreamError: true, status: 502, code: 'upstream_error' } },
  ],

  config: {
    invalid: [
      { change: { project: '' }, problems: [NEEDS_PROJECT] },
      { change: { location: '' }, problems: [NEEDS_PROJECT] },
    ],
  },
})

describe('vertex adapter: access tokens', () => {
  test('a service account token is obtained through the injected fetch, then reused', async () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    })
    const provider = {
      ...PROVIDER,
      credential: undefined,
      serviceAccount: {
        clientEmail: `contract-${crypto.randomUUID()}@proj.iam.gserviceaccount.com`,
        privateKey,
        tokenUri: 'https://oauth2.googleapis.test/token',
      },
    }
    const fake = fakeFetch()
    const translate = createAdapters(fake.fetch).vertex.translate
    fake.answer(
      Response.json({ access_token: 'ya29.signed', expires_in: 3599, token_type: 'Bearer' }),
      jsonResponse('vertex', 'raw-predict-answer'),
      jsonResponse('vertex', 'raw-predict-answer'),
    )
    const target = { provider, model: 'model-x', signal: new AbortController().signal, headers: {} }
    await translate?.send(target, PROMPT)
    await translate?.send(target, PROMPT)
    expect(fake.requests.map((request) => request.url)).toEqual(['https://oauth2.googleapis.test/token', `${CLAUDE}:rawPredict`, `${CLAUDE}:rawPredict`])
    const exchange = new URLSearchParams(String(fake.requests[0]?.body))
    expect(exchange.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer')
    expect(exchange.get('assertion')?.split('.').length).toBe(3)
    expect(fake.requests[1]?.headers.authorization).toBe('Bearer ya29.signed')
    expect(fake.requests[2]?.headers.authorization).toBe('Bearer ya29.signed')
  })
})
