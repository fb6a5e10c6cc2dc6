import type { Server, ServerWebSocket, WebSocketHandler } from 'bun'
import { InvalidRequestError } from '../../errors/kinds'
import { renderError } from '../../errors/render'
import { bodyLimitFor } from '../../http/body-limits'
import { ResponsesSocketSession, type SocketLimits } from './socket-session'

/** The bounds of a Responses WebSocket (docs/api.md#responses-over-websocket). */
export const SOCKET_LIMITS: SocketLimits = {
  // A message is a POST /v1/responses body, and bounded the same.
  maxMessageBytes: bodyLimitFor('/v1/responses'),
  idleMs: 10 * 60_000,
  maxCalls: 1000,
}

/** Bun pings a quiet socket and closes one that stops answering within this many seconds (a peer gone without a close). */
const DEAD_PEER_SECONDS = 120

/** What the socket needs of the gateway (src/app.ts): the handshake check, and serving one call. */
export interface SocketGateway {
  refuseSocket(request: Request): Promise<Response | undefined>
  handleSocketCall(request: Request): Promise<Response>
  readonly draining: boolean
}

/** What one socket may have queued for a slow client; the stream waits on the queue long before this. */
const BACKPRESSURE_BYTES = 16 * 1024 * 1024

export interface SocketData {
  url: string
  headers: Headers
  session?: ResponsesSocketSession
}

/** A GET /v1/responses asking to upgrade: anything else is plain HTTP. */
export function isResponsesUpgrade(request: Request): boolean {
  if (request.method !== 'GET' || request.headers.get('upgrade')?.toLowerCase() !== 'websocket') return false
  const url = request.url
  const pathStart = url.indexOf('/', url.indexOf('//') + 2)
  const queryStart = url.indexOf('?', pathStart)
  return url.slice(pathStart, queryStart < 0 ? undefined : queryStart) === '/v1/responses'
}

/**
 * The Responses WebSocket on a Bun server: `upgrade` answers the handshake (a refusal as the
 * HTTP error POST /v1/responses would get, which Codex reads before falling back to HTTP),
 * `websocket` is the server's handler.
 */
export function responsesSocketServer(gateway: SocketGateway, limits: SocketLimits = SOCKET_LIMITS) {
  const websocket: WebSocketHandler<SocketData> = {
    maxPayloadLength: limits.maxMessageBytes,
    idleTimeout: DEAD_PEER_SECONDS,
    sendPings: true,
    backpressureLimit: BACKPRESSURE_BYTES,
    closeOnBackpressureLimit: true,
    open(socket) {
      // Bun answers -1 for a message queued behind others; past the backpressure limit the socket is closed, never a message dropped.
      const port = { send: (text: string) => socket.send(text) === -1, close: (code: number, reason: string) => socket.close(code, reason) }
      const calls = { serve: (request: Request) => gateway.handleSocketCall(request), draining: () => gateway.draining }
      socket.data.session = new ResponsesSocketSession(port, calls, socket.data.url, socket.data.headers, limits)
    },
    message(socket, message) {
      socket.data.session?.message(typeof message === 'string' ? message : new Uint8Array(message))
    },
    drain(socket) {
      socket.data.session?.drained()
    },
    close(socket) {
      socket.data.session?.closedByPeer()
    },
  }
  return {
    websocket,
    async upgrade(request: Request, server: Server<SocketData>): Promise<Response | undefined> {
      if (!request.headers.get('sec-websocket-key') || request.headers.get('sec-websocket-version') !== '13') return malformedHandshake()
      const refusal = await gateway.refuseSocket(request)
      if (refusal) return refusal
      const url = new URL(request.url)
      url.protocol = 'http:'
      if (server.upgrade(request, { data: { url: url.href, headers: request.headers } })) return undefined
      return malformedHandshake()
    },
  }
}

export type ResponsesSocket = ServerWebSocket<SocketData>

function malformedHandshake(): Response {
  return renderError(new InvalidRequestError('The WebSocket handshake is malformed: it needs Sec-WebSocket-Key and Sec-WebSocket-Version: 13.'), 'openai')
}
