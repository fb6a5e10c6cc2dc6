import { endpointOf, proxyEndpoint } from './connect'
import { abortReason } from './errors'
import { exchange } from './exchange'
import { OriginPool, type PoolLimits } from './pool'
import { proxyFor } from './proxy-env'
import { encodeRequest, ownBody, requestMethod } from './request'

export type { BodySink, RawBody } from './raw-body'
export { rawBodyOf, readerBody } from './raw-body'

/** The client's limits; every field has a default fit for a gateway (DEFAULT_LIMITS). */
export type UpstreamClientOptions = Partial<PoolLimits> & {
  /** Where proxy variables are read, at each request (tests pass their own). */
  env?: Record<string, string | undefined>
}

export const DEFAULT_LIMITS: PoolLimits = {
  // A relayed stream holds its socket for its whole length: the gateway's own bound on upstream requests applies (config.ts maxUpstreamConnections).
  maxSocketsPerOrigin: 10_000,
  maxIdlePerOrigin: 256,
  idleTimeoutMs: 3000,
  connectTimeoutMs: 10_000,
}

export interface UpstreamClient {
  /** fetch's signature: a real Response, with a raw body attached for the stream relay (rawBodyOf). */
  fetch(url: string, init: RequestInit): Promise<Response>
  /** Closes the idle sockets; requests in flight finish. */
  close(): void
}

/**
 * An HTTP/1.1 client of the gateway's own on `Bun.connect`, for the provider calls: keep-alive
 * pools per origin, TLS, http proxies from the environment, connect timeout, aborts at any point
 * (docs/operations.md#how-upstreams-are-reached). It exists for the streams: fetch's body
 * reader was the relay's main cost, and this one hands the relay each network chunk straight
 * from the socket.
 *
 * What it does not do goes to the global fetch unchanged: bodies other than text or bytes (a
 * form with a file, a Blob, a stream: the media uploads), URLs that are not http(s), and a proxy
 * that is itself https. It does not follow redirects (an upstream's 3xx is returned as it is:
 * a provider's base URL names its API, not a page that moved) and does not compress requests.
 */
export function createUpstreamClient(options: UpstreamClientOptions = {}): UpstreamClient {
  const limits: PoolLimits = {
    maxSocketsPerOrigin: options.maxSocketsPerOrigin ?? DEFAULT_LIMITS.maxSocketsPerOrigin,
    maxIdlePerOrigin: options.maxIdlePerOrigin ?? DEFAULT_LIMITS.maxIdlePerOrigin,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_LIMITS.idleTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_LIMITS.connectTimeoutMs,
  }
  const pools = new Map<string, OriginPool>()

  async function send(url: string, init: RequestInit): Promise<Response> {
    let target: URL
    try {
      target = new URL(url)
    } catch {
      return fetch(url, init)
    }
    const body = ownBody(init.body)
    const method = requestMethod(init.method)
    const proxyUrl = proxyFor(target, options.env ?? process.env)
    const supported = (target.protocol === 'http:' || target.protocol === 'https:') && body !== undefined && method !== undefined
    if (!supported || (proxyUrl && proxyUrl.protocol !== 'http:')) return fetch(url, init)
    const signal = init.signal ?? undefined
    if (signal?.aborted) throw abortReason(signal)
    const endpoint = endpointOf(target)
    const proxy = proxyUrl ? proxyEndpoint(proxyUrl) : undefined
    const request = encodeRequest(method, target, endpoint, proxy, init, body)
    const key = `${target.protocol}//${endpoint.authority}${proxyUrl ? ` via ${proxyUrl.href}` : ''}`
    let pool = pools.get(key)
    if (!pool) {
      pool = new OriginPool(endpoint, proxy, limits)
      pools.set(key, pool)
    }
    return exchange(pool, method, request, signal)
  }

  return {
    fetch: send,
    close() {
      for (const pool of pools.values()) pool.closeIdle()
    },
  }
}
