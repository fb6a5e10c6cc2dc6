import { createUpstreamClient, type UpstreamClient } from '../upstream-http/client'
import type { Fetch, ProviderAdapter } from './adapter'
import { anthropicAdapter } from './anthropic'
import { geminiAdapter } from './gemini'
import { openAiAdapter } from './openai'
import type { ProviderConfig } from './provider-config'
import { vertexAdapter } from './vertex'

/** How provider calls reach the network (TOLLGATE_UPSTREAM_CLIENT): streams by the own client and whole answers by fetch, or everything by one. */
export type UpstreamClientKind = 'auto' | 'own' | 'fetch'

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
 * How the adapters reach the network (docs/operations.md#how-upstreams-are-reached). By default
 * (`auto`) a stream goes through the gateway's own HTTP/1.1 client (upstream-http/), which hands
 * the relay each chunk straight from the socket, and a whole answer through Bun's global fetch,
 * whose socket work runs on a thread of its own beside the event loop: each is the cheaper for
 * its kind, as measured. `own` or `fetch` sends everything one way. A stream is a request that
 * accepts `text/event-stream`: every adapter asks for one so. The own client passes what it does
 * not send itself (media uploads) to fetch.
 */
let upstream: UpstreamClient = createUpstreamClient()
let kind: UpstreamClientKind = 'auto'

const ADAPTERS = createAdapters((url, init) => (usesOwnClient(init) ? upstream.fetch(url, init) : fetch(url, init)))

function usesOwnClient(init: RequestInit): boolean {
  if (kind !== 'auto') return kind === 'own'
  const headers = init.headers
  if (!headers) return false
  const accept = headers instanceof Headers ? headers.get('accept') : Array.isArray(headers) ? undefined : headers.accept
  return accept === 'text/event-stream'
}

/** At start, from the config: which client, and the own client's bound on sockets to one upstream (TOLLGATE_MAX_UPSTREAM_CONNECTIONS). */
export function configureUpstreamClient(configured: UpstreamClientKind, maxSocketsPerOrigin: number): void {
  kind = configured
  upstream.close()
  upstream = createUpstreamClient({ maxSocketsPerOrigin })
}

export function adapterFor(provider: Pick<ProviderConfig, 'api'>): ProviderAdapter {
  return ADAPTERS[provider.api]
}
