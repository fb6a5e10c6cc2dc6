import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig, type ProviderConfig } from '../../src/config'
import { adapterFor, createAdapters } from '../../src/providers/registry'
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
