import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Prompt } from '../../src/canonical/prompt'
import { loadConfig } from '../../src/config/config'
import { ConfigError } from '../../src/config/config-error'
import type { ProviderConfig } from '../../src/providers/provider-config'
import { adapterFor, configureUpstreamClient, createAdapters } from '../../src/providers/registry'
import { MockUpstream } from '../upstream/mock-upstream'
import { fakeFetch } from './fake-fetch'

const dir = mkdtempSync(join(tmpdir(), 'tollgate-providers-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function configFile(providers: Record<string, object>): Record<string, string> {
  const path = join(dir, `${crypto.randomUUID()}.json`)
  writeFileSync(path, JSON.stringify({ providers, models: [] }))
  return { TOLLGATE_CONFIG: path }
}

/** The one provider of a config file holding `entry`, as config.ts resolves it. */
function loadedProvider(entry: object): ProviderConfig {
  const provider = loadConfig(configFile({ only: entry })).providers.get('only')
  if (!provider) throw new Error('the provider was not loaded')
  return provider
}

function configError(env: Record<string, string>): unknown {
  try {
    loadConfig(env)
  } catch (error) {
    return error
  }
  return undefined
}

describe('registry', () => {
  test('every API a provider entry may name has an adapter, with the global fetch by default', () => {
    expect(Object.keys(createAdapters(fakeFetch().fetch)).sort()).toEqual(['anthropic', 'gemini', 'openai', 'vertex'])
    for (const api of ['openai', 'anthropic', 'gemini', 'vertex'] as const) expect(adapterFor({ api })).toBeDefined()
  })
})

describe('provider config', () => {
  test('trailing slashes leave baseUrl once, where config is loaded; adapters append paths to it as it is', async () => {
    const provider = loadedProvider({ api: 'openai', baseUrl: 'http://127.0.0.1:9/v1//' })
    expect(provider.baseUrl).toBe('http://127.0.0.1:9/v1')
    const fake = fakeFetch()
    fake.answer(new Response('{}'))
    await createAdapters(fake.fetch).openai.media?.send({ provider, model: 'm', signal: new AbortController().signal, headers: {} }, '/embeddings', '{}')
    expect(fake.only().url).toBe('http://127.0.0.1:9/v1/embeddings')
  })

  test('the built-in catalogue is normalised the same way', () => {
    const ollama = loadConfig({ OLLAMA_BASE_URL: 'http://127.0.0.1:11434/v1/' }).providers.get('ollama')
    expect(ollama?.baseUrl).toBe('http://127.0.0.1:11434/v1')
  })

  test("an entry its adapter refuses stops the start, naming the entry and the adapter's reason", () => {
    const error = configError(configFile({ vx: { api: 'vertex', baseUrl: 'http://127.0.0.1:9', project: 'p' } }))
    expect(error).toBeInstanceOf(ConfigError)
    expect(error instanceof Error ? error.message : '').toEndWith(': providers.vx: vertex providers need "project" and "location"')
    expect(loadedProvider({ api: 'vertex', baseUrl: 'http://127.0.0.1:9', project: 'p', location: 'l' }).project).toBe('p')
  })
})

describe('how provider calls reach the network (TOLLGATE_UPSTREAM_CLIENT)', () => {
  const upstream = new MockUpstream().start()
  afterAll(() => {
    configureUpstreamClient('auto', 10_000)
    upstream.stop()
  })
  const target = (api: 'openai' | 'anthropic' | 'gemini') => ({
    provider: loadedProvider({ api, baseUrl: api === 'openai' ? upstream.baseUrl : upstream.origin }),
    model: 'm',
    signal: new AbortController().signal,
    headers: {},
  })
  const prompt = (stream: boolean): Prompt =>
    ({ system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], stream }) as unknown as Prompt
  /** Sends a streamed and a whole call of each kind; which client sent each shows in `accept-encoding`: the own client asks for identity, fetch for compression. */
  async function clientsOfCalls(): Promise<Record<string, string>> {
    upstream.reset()
    const sent = {
      'chat stream': () => adapterFor({ api: 'openai' }).chat?.send(target('openai'), { messages: [], stream: true }, undefined),
      'chat whole': () => adapterFor({ api: 'openai' }).chat?.send(target('openai'), { messages: [] }, undefined),
      'responses stream': () => adapterFor({ api: 'openai' }).responses?.send(target('openai'), { input: 'hi', stream: true }),
      'responses whole': () => adapterFor({ api: 'openai' }).responses?.send(target('openai'), { input: 'hi' }),
      'messages stream': () =>
        adapterFor({ api: 'anthropic' }).messages?.send(target('anthropic'), { messages: [], stream: true }, { version: null, beta: null, query: '' }),
      'gemini stream': () => adapterFor({ api: 'gemini' }).translate?.send(target('gemini'), prompt(true)),
      'gemini whole': () => adapterFor({ api: 'gemini' }).translate?.send(target('gemini'), prompt(false)),
    }
    const clients: Record<string, string> = {}
    for (const [name, send] of Object.entries(sent)) {
      const response = await send()
      await response?.arrayBuffer()
      const accepted = upstream.received.at(-1)?.headers['accept-encoding'] ?? ''
      clients[name] = accepted === 'identity' ? 'own' : accepted.includes('gzip') ? 'fetch' : accepted
    }
    return clients
  }

  test('auto (the default): streams through the own client, whole answers through fetch; own and fetch send everything one way', async () => {
    configureUpstreamClient('auto', 10_000)
    expect(await clientsOfCalls()).toEqual({
      'chat stream': 'own',
      'chat whole': 'fetch',
      'responses stream': 'own',
      'responses whole': 'fetch',
      'messages stream': 'own',
      'gemini stream': 'own',
      'gemini whole': 'fetch',
    })
    configureUpstreamClient('own', 10_000)
    expect(new Set(Object.values(await clientsOfCalls()))).toEqual(new Set(['own']))
    configureUpstreamClient('fetch', 10_000)
    expect(new Set(Object.values(await clientsOfCalls()))).toEqual(new Set(['fetch']))
  })
})
