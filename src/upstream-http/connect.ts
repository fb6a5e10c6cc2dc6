import { Connection } from './connection'
import { abortReason, closedEarly, UpstreamNetworkError } from './errors'
import { readResponseHead } from './response-head'

/** Where a request goes: the scheme's security, the host to dial and name, and the `host` header. */
export interface Endpoint {
  secure: boolean
  /** Without IPv6 brackets, as a socket dials it. */
  hostname: string
  port: number
  /** `host[:port]` as the request's `host` header and a CONNECT line name it. */
  authority: string
}

export function endpointOf(url: URL): Endpoint {
  const secure = url.protocol === 'https:'
  return { secure, hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port || (secure ? 443 : 80)), authority: url.host }
}

export interface ConnectOptions {
  /** Gives up on a connect (TCP, the proxy's tunnel and TLS together) after this long. */
  connectTimeoutMs: number
  signal: AbortSignal | undefined
}

/**
 * A connection ready for a request: to the endpoint itself, or through an http proxy. An https
 * target behind a proxy is reached through a CONNECT tunnel with TLS inside it, end to end; an
 * http target is sent to the proxy in absolute form (request.ts). TLS names the host (SNI and
 * the certificate check) and trusts what Bun's TLS trusts: its root store plus
 * `NODE_EXTRA_CA_CERTS`; `NODE_TLS_REJECT_UNAUTHORIZED=0` turns the check off, as with fetch.
 * The deadline and the signal both destroy whatever was started.
 */
export async function openConnection(endpoint: Endpoint, proxy: Endpoint | undefined, options: ConnectOptions): Promise<Connection> {
  const connection = new Connection()
  const { signal } = options
  if (signal?.aborted) throw abortReason(signal)
  let settleOutside: ((failure: unknown) => void) | undefined
  const giveUp = (failure: unknown) => {
    connection.destroy(failure)
    settleOutside?.(failure)
  }
  const timer = setTimeout(
    () => giveUp(new UpstreamNetworkError('ETIMEDOUT', `The upstream could not be connected to within ${options.connectTimeoutMs} ms.`)),
    options.connectTimeoutMs,
  )
  const onAbort = () => giveUp(abortReason(signal as AbortSignal))
  signal?.addEventListener('abort', onAbort, { once: true })
  try {
    const outside = new Promise<never>((_, reject) => {
      settleOutside = reject
    })
    await Promise.race([establish(connection, endpoint, proxy), outside])
    return connection
  } catch (error) {
    connection.destroy(error)
    throw error
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
  }
}

async function establish(connection: Connection, endpoint: Endpoint, proxy: Endpoint | undefined): Promise<void> {
  if (!proxy) return dial(connection, endpoint, endpoint.secure)
  await dial(connection, proxy, proxy.secure)
  if (!endpoint.secure) return
  const socket = connection.socket
  if (!socket) throw closedEarly('the tunnel was set up')
  connection.write(Buffer.from(`CONNECT ${endpoint.authority} HTTP/1.1\r\nhost: ${endpoint.authority}\r\n${proxyAuthorization(proxy)}\r\n`, 'latin1'))
  const head = await readResponseHead(connection)
  if (head.status !== 200) throw new UpstreamNetworkError('ProxyTunnelFailed', `The proxy refused the tunnel to the upstream (${head.status}).`)
  const upgraded = untilOpen(connection)
  // The tunnel's own socket now carries ciphertext: only the TLS socket's events reach the connection.
  socket.reload({ socket: TUNNEL_HANDLERS })
  const [, tls] = socket.upgradeTLS({ data: connection, tls: { serverName: endpoint.hostname }, socket: TLS_HANDLERS })
  connection.socket = tls
  await upgraded
}

/** Credentials of a proxy URL (`http://user:pass@proxy:3128`), set by proxyEndpoint. */
const PROXY_CREDENTIALS = new WeakMap<Endpoint, string>()

/** The proxy's endpoint, remembering its credentials for the Proxy-Authorization header. */
export function proxyEndpoint(proxy: URL): Endpoint {
  const endpoint = endpointOf(proxy)
  if (proxy.username) PROXY_CREDENTIALS.set(endpoint, `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`)
  return endpoint
}

/** The Proxy-Authorization header line for a proxy with credentials, else ''. */
export function proxyAuthorization(proxy: Endpoint): string {
  const credentials = PROXY_CREDENTIALS.get(proxy)
  return credentials ? `proxy-authorization: Basic ${Buffer.from(credentials).toString('base64')}\r\n` : ''
}

function untilOpen(connection: Connection): Promise<void> {
  return new Promise((resolve, reject) => {
    connection.settleOpen = (failure) => (failure === undefined ? resolve() : reject(failure))
  })
}

function dial(connection: Connection, endpoint: Endpoint, secure: boolean): Promise<void> {
  const open = untilOpen(connection)
  Bun.connect({
    hostname: endpoint.hostname,
    port: endpoint.port,
    data: connection,
    ...(secure ? { tls: { serverName: endpoint.hostname }, socket: TLS_HANDLERS } : { socket: PLAIN_HANDLERS }),
  }).catch(() => {
    // connectError has already settled the connect with the failure.
  })
  return open
}

/** Events shared by plain and TLS sockets, routed to the connection the socket carries. */
const COMMON_HANDLERS: Bun.SocketHandler<Connection> = {
  data: (socket, bytes) => socket.data.received(bytes),
  drain: (socket) => socket.data.drained(),
  end: (socket) => socket.data.endedByServer(),
  close(socket, error) {
    socket.data.endedByServer(error)
    socket.data.opened(closedEarly('the connection was set up'))
  },
  error: (socket, error) => socket.data.endedByServer(error),
  connectError: (socket, error) => socket.data.opened(connectFailure(error)),
}

const PLAIN_HANDLERS: Bun.SocketHandler<Connection> = {
  ...COMMON_HANDLERS,
  open(socket) {
    adopt(socket)
    socket.data.opened()
  },
}

/** With a handshake handler, `open` comes before the handshake: the connection is usable only after it. */
const TLS_HANDLERS: Bun.SocketHandler<Connection> = {
  ...COMMON_HANDLERS,
  open: adopt,
  handshake(socket, success, authorizationError) {
    if (success) socket.data.opened()
    else socket.data.opened(tlsFailure(authorizationError))
  },
}

/** The raw socket under a TLS tunnel: its bytes are the TLS socket's business; its close still ends the connection. */
const TUNNEL_HANDLERS: Bun.SocketHandler<Connection> = {
  data: () => undefined,
  close: (socket, error) => socket.data.endedByServer(error),
}

/** The socket belongs to its connection now, unless the connect was given up meanwhile. */
function adopt(socket: Bun.Socket<Connection>): void {
  if (socket.data.closed) {
    socket.terminate()
    return
  }
  socket.data.socket = socket
  socket.setNoDelay(true)
}

function connectFailure(error: Error): UpstreamNetworkError {
  const code = (error as { code?: unknown }).code
  const name = typeof code === 'string' ? code : 'ConnectionRefused'
  return new UpstreamNetworkError(name, `Unable to connect to the upstream (${name}).`, { cause: error })
}

function tlsFailure(error: Error | null): UpstreamNetworkError {
  const code = (error as { code?: unknown } | null)?.code
  return new UpstreamNetworkError(
    typeof code === 'string' ? code : 'ERR_TLS_HANDSHAKE',
    `The upstream's TLS could not be trusted: ${error?.message ?? 'handshake failed'}.`,
    {
      cause: error,
    },
  )
}
