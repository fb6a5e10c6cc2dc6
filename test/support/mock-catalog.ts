import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A config file whose providers are mock upstreams: `a` and `b` are two loopback servers (`b`
 * stands for a chat-only OpenAI-compatible server: `responsesApi: false`; `a` detects the
 * Responses API, the default), `dead` refuses connections, `sluggish` is server `a` with a 300 ms header timeout, `native`
 * and `native-b` speak Anthropic's messages API on `a` and `b`.
 */
export function mockCatalog(a: string, b: string) {
  return {
    providers: {
      a: { api: 'openai', baseUrl: a, apiKey: 'sk-upstream-a', pollIntervalMs: 10 },
      veo: {
        api: 'vertex',
        baseUrl: a.replace(/\/v1$/, ''),
        project: 'proj',
        location: 'us-central1',
        apiKey: 'vertex-token',
        pollIntervalMs: 10,
        gcsUriPrefixes: ['gs://bucket/uploads/'],
      },
      b: { api: 'openai', baseUrl: b, apiKey: 'sk-upstream-b', responsesApi: false },
      dead: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-dead' },
      sluggish: { api: 'openai', baseUrl: a, apiKey: 'sk-upstream-a', timeoutMs: 300 },
      native: { api: 'anthropic', baseUrl: a.replace(/\/v1$/, ''), apiKey: 'sk-ant-a' },
      gemini: { api: 'gemini', baseUrl: a.replace(/\/v1$/, ''), apiKey: 'gemini-key-a' },
      'native-b': { api: 'anthropic', baseUrl: b.replace(/\/v1$/, ''), apiKey: 'sk-ant-b' },
    },
    models: [
      { id: 'test/cheap', type: 'chat', routes: [{ provider: 'a', model: 'cheap-upstream' }], pricing: { input: 1, output: 2 }, maxOutputTokens: 1000 },
      {
        id: 'test/smart',
        type: 'chat',
        routes: [
          { provider: 'a', model: 'smart-a' },
          { provider: 'b', model: 'smart-b' },
        ],
        pricing: { input: 3, output: 15, cacheRead: 0.3 },
        maxOutputTokens: 4000,
      },
      {
        id: 'test/fragile',
        type: 'chat',
        routes: [
          { provider: 'dead', model: 'x' },
          { provider: 'b', model: 'fragile-b' },
        ],
        pricing: { input: 1, output: 1 },
        maxOutputTokens: 1000,
      },
      {
        id: 'test/slow',
        type: 'chat',
        routes: [
          { provider: 'sluggish', model: 'slow-a' },
          { provider: 'b', model: 'slow-b' },
        ],
        pricing: { input: 1, output: 1 },
        maxOutputTokens: 1000,
      },
      {
        id: 'test/timeout',
        type: 'chat',
        routes: [
          { provider: 'b', model: 'timeout-b' },
          { provider: 'sluggish', model: 'timeout-a' },
        ],
        pricing: { input: 1, output: 1 },
        maxOutputTokens: 1000,
      },
      {
        id: 'anthropic/claude-test',
        type: 'chat',
        routes: [
          { provider: 'native', model: 'claude-test-a' },
          { provider: 'native-b', model: 'claude-test-b' },
        ],
        pricing: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, webSearch: 0.01 },
        maxOutputTokens: 1000,
      },
      // A real model name, as Claude Code sends it.
      {
        id: 'anthropic/claude-sonnet-4-5',
        type: 'chat',
        routes: [{ provider: 'native', model: 'claude-sonnet-4-5' }],
        pricing: { input: 3, output: 15 },
        maxOutputTokens: 64000,
      },
      // A messages-family model served only by translation (an OpenAI-format route).
      { id: 'anthropic/claude-bridge', type: 'chat', routes: [{ provider: 'a', model: 'bridge-a' }], pricing: { input: 2, output: 10 }, maxOutputTokens: 1000 },
      // Native first, translated second: failover crosses formats.
      {
        id: 'anthropic/claude-mixed',
        type: 'chat',
        routes: [
          { provider: 'native', model: 'mixed-native' },
          { provider: 'b', model: 'mixed-b' },
        ],
        pricing: { input: 2, output: 10 },
        maxOutputTokens: 1000,
      },
      {
        id: 'google/gemini-test',
        type: 'chat',
        routes: [{ provider: 'gemini', model: 'gemini-test-a' }],
        pricing: { input: 0.3, output: 2.5, cacheRead: 0.03 },
        maxOutputTokens: 1000,
      },
      { id: 'google/gemini-embed', type: 'embedding', routes: [{ provider: 'gemini', model: 'gemini-embed-a' }], pricing: { input: 0.15 } },
      { id: 'test/sora', type: 'video', videoFamily: 'B', routes: [{ provider: 'a', model: 'sora-a' }], pricing: { videoSecond: 0.1 } },
      { id: 'google/veo-test', type: 'video', videoFamily: 'A', routes: [{ provider: 'veo', model: 'veo-test-001' }], pricing: { videoSecond: 0.4 } },
      // Served by an OpenAI-compatible server with chat completions only.
      { id: 'test/chat-only', type: 'chat', routes: [{ provider: 'b', model: 'chat-only-b' }], pricing: { input: 1, output: 4 }, maxOutputTokens: 1000 },
      { id: 'test/embed', type: 'embedding', routes: [{ provider: 'a', model: 'embed' }], pricing: { input: 0.02 } },
      { id: 'test/image', type: 'image', routes: [{ provider: 'a', model: 'image-a' }], pricing: { image: 0.04 } },
      { id: 'test/tts', type: 'speech', routes: [{ provider: 'a', model: 'tts-a' }], pricing: { inputChars: 15 } },
      { id: 'test/whisper', type: 'transcription', routes: [{ provider: 'a', model: 'whisper-a' }], pricing: { output: 10, audioMinute: 0.006 } },
      // Priced by the minute only, as whisper-1.
      { id: 'test/whisper-minutes', type: 'transcription', routes: [{ provider: 'a', model: 'whisper-minutes-a' }], pricing: { audioMinute: 0.006 } },
    ],
    aliases: [{ id: 'tollgate/best', strategy: 'fallback', targets: ['test/smart', 'test/cheap'] }],
  }
}

/**
 * Writes the catalogue to a temporary file and returns the environment that names it.
 * `providerSettings` adds fields to named providers (a short timeout for one test file, say).
 */
export function mockCatalogEnv(a: string, b: string, providerSettings: Record<string, Record<string, unknown>> = {}): Record<string, string> {
  const catalog = mockCatalog(a, b)
  const providers: Record<string, Record<string, unknown>> = catalog.providers
  for (const [name, settings] of Object.entries(providerSettings)) {
    if (!providers[name]) throw new Error(`mock catalogue has no provider ${name}`)
    providers[name] = { ...providers[name], ...settings }
  }
  const path = join(mkdtempSync(join(tmpdir(), 'tollgate-catalog-')), 'tollgate.json')
  writeFileSync(path, JSON.stringify(catalog))
  return { TOLLGATE_CONFIG: path }
}
