import { beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { mockCatalog } from '../support/mock-catalog'
import type { MockUpstream } from '../upstream/mock-upstream'

const hi = [{ role: 'user', content: 'Say hi.' }]

/**
 * Nothing a client sends makes the operator pay more than the client is billed: request options
 * priced above the catalogue (a premium service tier, long-context and fast-mode betas, regional
 * inference, one-hour cache writes) never reach the upstream, and the request still works.
 */
describe('price-changing request options are not forwarded', () => {
  const suite = gatewaySuite(testDatabases[0]!, { env: ({ upstream }) => catalogEnv(upstream) })
  const upstream = suite.upstream

  /** The mock catalogue with Claude on Vertex AI and a provider that always serves the Responses API natively. */
  function catalogEnv(upstream: MockUpstream): Record<string, string> {
    const catalog = mockCatalog(upstream.baseUrl, upstream.baseUrl)
    // Claude on Vertex AI's publisher endpoint, served by the same mock.
    const vertexClaude = {
      id: 'anthropic/claude-vertex',
      type: 'chat',
      routes: [{ provider: 'veo', model: 'claude-vertex@001' }],
      pricing: { input: 3, output: 15 },
      maxOutputTokens: 1000,
    }
    const path = join(mkdtempSync(join(tmpdir(), 'tollgate-price-options-')), 'tollgate.json')
    // An OpenAI-format provider that always serves the Responses API natively (no translation to fall back on).
    const strict = { api: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-upstream-strict', responsesApi: true }
    const strictModel = {
      id: 'test/strict',
      type: 'chat',
      routes: [{ provider: 'strict', model: 'strict-a' }],
      pricing: { input: 1, output: 2 },
      maxOutputTokens: 1000,
    }
    // Models that price one-hour cache writes, on Anthropic's API and on Vertex AI.
    const hourPricing = { input: 3, output: 15, cacheWrite: 3.75, cacheWrite1h: 6 }
    const hourClaude = { ...vertexClaude, id: 'anthropic/claude-hour', routes: [{ provider: 'native', model: 'claude-hour-a' }], pricing: hourPricing }
    const hourVertex = { ...vertexClaude, id: 'anthropic/claude-vertex-hour', pricing: hourPricing }
    const models = [...catalog.models, vertexClaude, strictModel, hourClaude, hourVertex]
    writeFileSync(path, JSON.stringify({ ...catalog, providers: { ...catalog.providers, strict }, models }))
    return { TOLLGATE_CONFIG: path }
  }
  beforeEach(() => upstream.reset())

  /** The body the upstream received for each request, in order. */
  const sentBodies = () => upstream.received.map((request) => request.body)

  test('chat completions and the Responses API: service_tier auto and default pass, priority, flex and scale are dropped', async () => {
    const { key } = await suite.harness.key()
    for (const tier of ['auto', 'default', 'priority', 'flex', 'scale']) {
      expect(
        (await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/cheap', messages: hi, service_tier: tier } }))
          .status,
      ).toBe(200)
      expect(
        (await suite.harness.call('POST', '/v1/responses', { headers: bearer(key), body: { model: 'test/smart', input: 'Say hi.', service_tier: tier } }))
          .status,
      ).toBe(200)
    }
    expect(upstream.received.map((request) => [request.path, request.body.service_tier])).toEqual([
      ['/v1/chat/completions', 'auto'],
      ['/v1/responses', 'auto'],
      ['/v1/chat/completions', 'default'],
      ['/v1/responses', 'default'],
      ...Array.from({ length: 3 }, () => [
        ['/v1/chat/completions', undefined],
        ['/v1/responses', undefined],
      ]).flat(),
    ])
  })

  test('the Responses API: tools the provider bills per use are not forwarded; function tools are', async () => {
    const { key } = await suite.harness.key()
    for (const type of ['web_search', 'web_search_preview', 'file_search', 'code_interpreter', 'image_generation']) {
      const tools = [{ type: 'function', name: 'f', parameters: {} }, { type }]
      const reply = await suite.harness.call('POST', '/v1/responses', {
        headers: bearer(key),
        body: { model: 'test/strict', input: 'Say hi.', tools, tool_choice: { type } },
      })
      expect({ type, status: reply.status }).toEqual({ type, status: 200 })
    }
    const onlyHosted = await suite.harness.call('POST', '/v1/responses', {
      headers: bearer(key),
      body: { model: 'test/strict', input: 'Say hi.', tools: [{ type: 'web_search' }], tool_choice: 'auto' },
    })
    expect(onlyHosted.status).toBe(200)
    const sent = upstream.received.map((request) => ({
      path: request.path,
      tools: request.body.tools?.map((tool: { type: string }) => tool.type),
      tool_choice: request.body.tool_choice,
    }))
    expect(sent).toEqual([
      ...Array.from({ length: 5 }, () => ({ path: '/v1/responses', tools: ['function'], tool_choice: undefined })),
      { path: '/v1/responses', tools: undefined, tool_choice: 'auto' },
    ])
  })

  const messages = (key: string, body: object, betas?: string) =>
    suite.harness.call('POST', '/v1/messages', {
      headers: { 'x-api-key': key, ...(betas ? { 'anthropic-beta': betas } : {}) },
      body: { max_tokens: 100, messages: hi, ...body },
    })

  test('messages: long-context and fast-mode betas are stripped from anthropic-beta; every other beta arrives', async () => {
    const { key } = await suite.harness.key()
    const betas = 'prompt-caching-2024-07-31, context-1m-2025-08-07,interleaved-thinking-2025-05-14,fast-mode-2026-02-01,fine-grained-tool-streaming-2025-05-14'
    expect((await messages(key, { model: 'claude-test' }, betas)).status).toBe(200)
    expect((await messages(key, { model: 'claude-test' }, 'context-1m-2025-08-07')).status).toBe(200)
    expect((await messages(key, { model: 'claude-test' }, 'claude-code-20250219,interleaved-thinking-2025-05-14')).status).toBe(200)
    expect(upstream.received.map((request) => request.headers['anthropic-beta'])).toEqual([
      'prompt-caching-2024-07-31,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14',
      undefined,
      'claude-code-20250219,interleaved-thinking-2025-05-14',
    ])
  })

  test('messages: speed, service_tier and inference_geo keep only their catalogue-price values', async () => {
    const { key } = await suite.harness.key()
    const options = [
      { speed: 'fast', service_tier: 'auto', inference_geo: 'us' },
      { speed: 'standard', service_tier: 'standard_only', inference_geo: 'global' },
      { service_tier: 'priority' },
    ]
    for (const option of options) expect((await messages(key, { model: 'claude-test', ...option })).status).toBe(200)
    const [premium, standard, priority] = sentBodies()
    expect([premium.speed, premium.service_tier, premium.inference_geo]).toEqual([undefined, undefined, undefined])
    expect(standard).toMatchObject(options[1]!)
    expect(priority.service_tier).toBeUndefined()
  })

  test('messages: one-hour cache writes become default five-minute ones, wherever cache_control sits', async () => {
    const { key } = await suite.harness.key()
    const hour = { type: 'ephemeral', ttl: '1h' }
    const fiveMinutes = { type: 'ephemeral', ttl: '5m' }
    const body = {
      model: 'claude-test',
      cache_control: hour,
      system: [{ type: 'text', text: 'Be brief.', cache_control: hour }],
      tools: [{ name: 'f', input_schema: { type: 'object' }, cache_control: hour }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Call f.', cache_control: fiveMinutes }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { cache_control: hour } }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'done', cache_control: hour }], cache_control: hour }],
        },
      ],
    }
    expect((await messages(key, body)).status).toBe(200)
    const [sent] = sentBodies()
    const ephemeral = { type: 'ephemeral' }
    expect(sent).toMatchObject({
      cache_control: ephemeral,
      system: [{ type: 'text', text: 'Be brief.', cache_control: ephemeral }],
      tools: [{ name: 'f', cache_control: ephemeral }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Call f.', cache_control: fiveMinutes }] },
        // A tool's input is the conversation's content, not a cache setting: untouched.
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { cache_control: hour } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'done', cache_control: ephemeral }], cache_control: ephemeral },
          ],
        },
      ],
    })
    expect(JSON.stringify([sent.cache_control, sent.system, sent.tools, sent.messages[2]])).not.toContain('1h')
  })

  test('messages: a model that prices one-hour writes gets them unchanged; longer lifetimes are still dropped', async () => {
    const { key } = await suite.harness.key()
    const hour = { type: 'ephemeral', ttl: '1h' }
    const day = { type: 'ephemeral', ttl: '24h' }
    const body = {
      cache_control: hour,
      system: [{ type: 'text', text: 'Be brief.', cache_control: hour }],
      tools: [{ name: 'f', input_schema: { type: 'object' }, cache_control: day }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi.', cache_control: hour }] }],
    }
    for (const model of ['claude-hour', 'claude-vertex-hour']) expect((await messages(key, { model, ...body })).status).toBe(200)
    const [native, vertex] = sentBodies()
    for (const sent of [native, vertex]) {
      expect(sent).toMatchObject({
        cache_control: hour,
        system: [{ cache_control: hour }],
        tools: [{ name: 'f', cache_control: { type: 'ephemeral' } }],
        messages: [{ content: [{ cache_control: hour }] }],
      })
      expect(sent.tools[0].cache_control.ttl).toBeUndefined()
    }
    expect(upstream.received.map((request) => request.path)).toEqual(['/v1/messages', expect.stringMatching(/claude-vertex@001:rawPredict$/)])
  })

  test('messages on Vertex AI: the same betas and options are dropped', async () => {
    const { key } = await suite.harness.key()
    const reply = await messages(
      key,
      { model: 'claude-vertex', speed: 'fast', service_tier: 'auto', inference_geo: 'us', cache_control: { type: 'ephemeral', ttl: '1h' } },
      'context-1m-2025-08-07,interleaved-thinking-2025-05-14',
    )
    expect(reply.status).toBe(200)
    const call = upstream.received.find((request) => request.path.endsWith(':rawPredict'))!
    expect(call.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14')
    expect(call.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', cache_control: { type: 'ephemeral' } })
    expect([call.body.speed, call.body.service_tier, call.body.inference_geo, call.body.cache_control.ttl]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ])
  })
})
