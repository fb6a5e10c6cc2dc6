import type { ProviderConfig, UpstreamClientKind } from '../config'
import { createUpstreamClient, type UpstreamClient } from '../upstream-http/client'
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
 * How the adapters reach the network: the gateway's own HTTP/1.1 client (upstream-http/) by
 * default, which hands the stream relay each chunk straight from the socket and passes what it
 * does not send itself (media uploads) to the global fetch; or the global fetch for everything
 * (`TOLLGATE_UPSTREAM_CLIENT=fetch`, docs/configuration.md). Both are looked up at each call.
 */
let upstream: UpstreamClient = createUpstreamClient()
let useGlobalFetch = false

const ADAPTERS = createAdapters((url, init) => (useGlobalFetch ? fetch(url, init) : upstream.fetch(url, init)))

/** At start, from the config: which client, and the own client's bound on sockets to one upstream (TOLLGATE_MAX_UPSTREAM_CONNECTIONS). */
export function configureUpstreamClient(kind: UpstreamClientKind, maxSocketsPerOrigin: number): void {
  useGlobalFetch = kind === 'fetch'
  upstream.close()
  upstream = createUpstreamClient({ maxSocketsPerOrigin })
}

export function adapterFor(provider: Pick<ProviderConfig, 'api'>): ProviderAdapter {
  return ADAPTERS[provider.api]
}
