import type { ProviderConfig } from '../config'
import type { Fetch, ProviderAdapter } from './adapter'
import { anthropicAdapter } from './anthropic'
import { geminiAdapter } from './gemini'
import { openAiAdapter } from './openai'
import { vertexAdapter } from './vertex'

/** The upstream APIs a provider entry may name. */
export type ProviderApi = ProviderConfig['api']

/** One adapter per upstream API, every one reaching the network through `fetch`. */
export function createAdapters(fetch: Fetch): Record<ProviderApi, ProviderAdapter> {
  return {
    openai: openAiAdapter(fetch),
    anthropic: anthropicAdapter(fetch),
    vertex: vertexAdapter(fetch),
    gemini: geminiAdapter(fetch),
  }
}

/**
 * The adapters the gateway runs with: over the global fetch, looked up at each call rather
 * than captured here, so whatever the runtime's fetch is when a request goes out is the one used.
 */
const ADAPTERS = createAdapters((url, init) => fetch(url, init))

export function adapterFor(provider: Pick<ProviderConfig, 'api'>): ProviderAdapter {
  return ADAPTERS[provider.api]
}
