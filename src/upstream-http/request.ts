import { type Endpoint, proxyAuthorization } from './connect'

/**
 * The request bodies the client sends itself: none, text (the providers' JSON) or bytes. Anything
 * else (a form with a file, a Blob, a stream: the media uploads) goes through the global fetch,
 * which streams and encodes those already; returns undefined for them.
 */
export function ownBody(body: RequestInit['body']): Uint8Array | null | undefined {
  if (body === undefined || body === null) return null
  if (typeof body === 'string') return Buffer.from(body, 'utf8')
  if (body instanceof Uint8Array) return body
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  return undefined
}

/** Headers the client writes itself from the request, whatever the caller passed. */
const OWN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect'])

/**
 * One HTTP/1.1 request, head and body in one buffer, so it goes out in one write. Headers pass
 * through `Headers`, which refuses a name or value HTTP does not allow (a CR or LF cannot smuggle
 * a second header). Like fetch, text gets `content-type: text/plain;charset=UTF-8` when none is
 * given, and `accept` and `user-agent` get fetch's defaults; `accept-encoding: identity` asks for
 * an uncompressed answer, so a stream's bytes are its text (response.ts decodes gzip and deflate
 * when a server compresses all the same). Through an http proxy, an http target is named in
 * absolute form.
 */
export function encodeRequest(
  method: string,
  url: URL,
  endpoint: Endpoint,
  proxy: Endpoint | undefined,
  init: RequestInit,
  body: Uint8Array | null,
): Uint8Array {
  const headers = new Headers(init.headers)
  const target = proxy && !endpoint.secure ? `http://${url.host}${url.pathname}${url.search}` : `${url.pathname}${url.search}`
  let head = `${method} ${target} HTTP/1.1\r\nhost: ${endpoint.authority}\r\n`
  if (proxy && !endpoint.secure) head += proxyAuthorization(proxy)
  if (!headers.has('accept')) head += 'accept: */*\r\n'
  if (!headers.has('user-agent')) head += `user-agent: Bun/${Bun.version}\r\n`
  if (!headers.has('accept-encoding')) head += 'accept-encoding: identity\r\n'
  if (typeof init.body === 'string' && !headers.has('content-type')) head += 'content-type: text/plain;charset=UTF-8\r\n'
  for (const [name, value] of headers) if (!OWN_HEADERS.has(name)) head += `${name}: ${value}\r\n`
  if (body !== null || method === 'POST' || method === 'PUT' || method === 'PATCH') head += `content-length: ${body?.length ?? 0}\r\n`
  head += '\r\n'
  if (body === null || body.length === 0) return Buffer.from(head, 'latin1')
  // Header values are ISO-8859-1 octets (what Headers keeps); the body is sent as given.
  const headBytes = Buffer.from(head, 'latin1')
  const bytes = new Uint8Array(headBytes.length + body.length)
  bytes.set(headBytes, 0)
  bytes.set(body, headBytes.length)
  return bytes
}

/** A method name as HTTP defines one (a token), upper-cased as fetch normalizes the common ones. */
export function requestMethod(method: string | undefined): string | undefined {
  const upper = (method ?? 'GET').toUpperCase()
  return /^[A-Z0-9!#$%&'*+.^_`|~-]+$/.test(upper) ? upper : undefined
}
