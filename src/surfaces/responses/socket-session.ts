import { GatewayError } from '../../errors/gateway-error'
import { InvalidRequestError } from '../../errors/kinds'
import { asGatewayError } from '../../errors/render'
import { SseFramer } from '../../streaming/sse'
import { newId } from '../../util/ids'
import { connectedInput, inputItems, type SocketMemory } from './socket-memory'

/**
 * One Responses WebSocket (docs/api.md#responses-over-websocket), the transport Codex CLI uses
 * with a provider whose `supports_websockets` is on. Each `response.create` message is served
 * as one POST /v1/responses with `stream: true` made with the handshake's headers: its own
 * authentication (a key revoked mid-session stops being served), hold, request id and
 * settlement, exactly as over HTTP. Its events go back as one JSON text message each. The
 * socket closing mid-response cancels that stream, which settles as an abandoned one.
 */

/** What bounds one socket. */
export interface SocketLimits {
  /** The largest message accepted, in bytes (Bun closes the socket with 1009 past it). */
  maxMessageBytes: number
  /** How long a socket may stay without a call in progress before it is closed. */
  idleMs: number
  /** How many `response.create` calls one socket serves; past it the client opens a new one. */
  maxCalls: number
}

/** What the session needs of the socket it speaks on. */
export interface SocketPort {
  /** Sends one text message; true when it was queued behind others (the client reads slower than the stream comes). */
  send(text: string): boolean
  close(code: number, reason: string): void
}

/** What the session needs of the gateway. */
export interface SocketCalls {
  /** Serves one POST /v1/responses made for a socket's call. */
  serve(request: Request): Promise<Response>
  /** The gateway is shutting down: a socket closes once its call in progress ends, so the listener can stop. */
  draining(): boolean
}

/** Codex reconnects on this code (its source names it), so a socket's call limit costs it nothing. */
const CONNECTION_LIMIT_CODE = 'websocket_connection_limit_reached'

/** Close codes (RFC 6455 section 7.4.1). */
const NORMAL_CLOSURE = 1000
const GOING_AWAY = 1001
const POLICY_VIOLATION = 1008

/** Handshake headers that belong to the socket, not to the calls made on it. */
const SOCKET_ONLY_HEADERS = new Set(['connection', 'upgrade', 'content-length', 'transfer-encoding', 'idempotency-key', 'host'])

/** Message fields of the socket protocol that POST /v1/responses does not take. */
const SOCKET_ONLY_FIELDS = ['type', 'generate', 'client_metadata'] as const

export class ResponsesSocketSession {
  private callCount = 0
  private current: AbortController | undefined
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  private closed = false
  private memory: SocketMemory | undefined
  private drainWaiter: (() => void) | undefined
  private readonly callHeaders: Headers

  constructor(
    private readonly port: SocketPort,
    private readonly calls: SocketCalls,
    private readonly url: string,
    handshakeHeaders: Headers,
    private readonly limits: SocketLimits,
  ) {
    this.callHeaders = new Headers()
    for (const [name, value] of handshakeHeaders) {
      if (!SOCKET_ONLY_HEADERS.has(name) && !name.startsWith('sec-websocket-')) this.callHeaders.set(name, value)
    }
    this.callHeaders.set('content-type', 'application/json')
    this.armIdleTimer()
  }

  /** One message from the client. */
  message(message: string | Uint8Array): void {
    if (this.closed) return
    const parsed = typeof message === 'string' ? parseMessage(message) : new InvalidRequestError('Messages are JSON text; a binary message was sent.')
    const refusal = parsed instanceof GatewayError ? parsed : this.refusalOf(parsed)
    if (refusal) {
      this.sendError(refusal)
      if (refusal instanceof SocketLimitError) this.close(NORMAL_CLOSURE, 'call limit reached')
      return
    }
    // Codex acknowledges each response it has read (`response.processed`): nothing to do.
    if (parsed instanceof GatewayError || parsed.type !== 'response.create') return
    this.callCount += 1
    const call = new AbortController()
    this.current = call
    this.disarmIdleTimer()
    void this.run(parsed, call)
      // The gateway answers every failure itself; this is for a fault of the socket's own code.
      .catch((error: unknown) => this.sendError(asGatewayError(error)))
      .finally(() => {
        if (this.current === call) this.current = undefined
        // Going away (1001): Codex reconnects, to an instance that is not shutting down.
        if (this.calls.draining()) this.close(GOING_AWAY, 'shutting down')
        else if (!this.closed) this.armIdleTimer()
      })
  }

  /** Why a message starts no call, or undefined: a `response.create` this socket may serve now, or an acknowledgement. */
  private refusalOf(message: SocketMessage): GatewayError | undefined {
    if (message.type === 'response.processed') return undefined
    if (message.type !== 'response.create') {
      return new InvalidRequestError(`Unknown message type ${JSON.stringify(String(message.type).slice(0, 64))}: send "response.create".`, { param: 'type' })
    }
    // One call at a time, as Codex makes them: a second while one runs is refused, the first goes on.
    if (this.current)
      return new InvalidRequestError('A response is already in progress on this socket; send the next response.create after its response.completed.')
    if (this.callCount >= this.limits.maxCalls)
      return new SocketLimitError(`This socket has served its ${this.limits.maxCalls} responses; open a new connection to continue.`)
    return undefined
  }

  /** The socket's send queue emptied. */
  drained(): void {
    const waiting = this.drainWaiter
    this.drainWaiter = undefined
    waiting?.()
  }

  private untilDrained(): Promise<void> {
    if (this.closed) return Promise.resolve()
    return new Promise((resolve) => {
      this.drainWaiter = resolve
    })
  }

  /** The socket closed, by either side: a call in progress is cancelled, and settles as an abandoned stream. */
  closedByPeer(): void {
    this.closed = true
    this.disarmIdleTimer()
    this.current?.abort()
    this.drained()
  }

  private async run(message: SocketMessage, call: AbortController): Promise<void> {
    // `generate: false` warms a connection up (Codex sends one before its first turn): it asks
    // for no output, so no upstream call is made and nothing is charged.
    if (message.generate === false) return this.sendWarmUp(message)
    const body: SocketMessage = { ...message, stream: true }
    for (const field of SOCKET_ONLY_FIELDS) delete body[field]
    const input = connectedInput(body, this.memory)
    if (input) {
      body.input = input
      delete body.previous_response_id
    }
    const request = new Request(this.url, { method: 'POST', headers: this.callHeaders, body: JSON.stringify(body), signal: call.signal })
    const response = await this.calls.serve(request)
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return this.relayRefusal(response)
    await this.relayEvents(response, call, inputItems(body.input))
  }

  private async relayEvents(response: Response, call: AbortController, sentInput: unknown[] | undefined): Promise<void> {
    const body = response.body
    if (!body) return
    const reader = body.pipeThrough(new TextDecoderStream()).getReader()
    const cancel = () => void reader.cancel().catch(() => undefined)
    call.signal.addEventListener('abort', cancel, { once: true })
    const framer = new SseFramer()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        const events = done ? framer.end() : framer.push(value)
        for (const event of events) {
          if (this.closed) return
          const queued = this.port.send(event.data)
          if (event.event === 'response.completed') this.remember(event.data, sentInput)
          // A client reading slower than the stream: the stream waits (and with it the upstream), rather than the gateway buffering it.
          if (queued) await this.untilDrained()
        }
        if (done) return
      }
    } catch {
      // The stream failed or was cancelled: its relay has already settled and recorded it.
    } finally {
      call.signal.removeEventListener('abort', cancel)
    }
  }

  /** A completed response is what a later `previous_response_id` on this socket may name (socket-memory.ts). */
  private remember(data: string, sentInput: unknown[] | undefined): void {
    if (!sentInput) return
    const event = safeJson(data)
    const response = isObject(event) && isObject(event.response) ? event.response : undefined
    if (response && typeof response.id === 'string' && Array.isArray(response.output)) {
      this.memory = { responseId: response.id, items: [...sentInput, ...response.output] }
    }
  }

  /** An answer that is not a stream is a refusal (or an error) in the OpenAI envelope: sent as an error event carrying its status. */
  private async relayRefusal(response: Response): Promise<void> {
    const parsed = safeJson(await response.text().catch(() => ''))
    const error =
      isObject(parsed) && isObject(parsed.error) ? parsed.error : { type: 'api_error', code: 'internal_error', message: 'The gateway failed.', param: null }
    if (this.closed) return
    this.port.send(errorEvent(response.status, error))
    // A credential refused on a call (revoked, expired) ends the socket: every later call would be refused too.
    if (response.status === 401) this.close(POLICY_VIOLATION, 'credential refused')
  }

  /**
   * A warm-up's response has no output, but Codex continues it: its next call names it in
   * `previous_response_id` and sends only the input added since, so its input is remembered.
   */
  private sendWarmUp(message: SocketMessage): void {
    const id = `resp_${newId('req').slice(4)}`
    const items = inputItems(message.input)
    if (items) this.memory = { responseId: id, items }
    const response = {
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      model: typeof message.model === 'string' ? message.model.slice(0, 200) : null,
      output: [],
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, cost: 0 },
    }
    this.port.send(JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress' } }))
    this.port.send(JSON.stringify({ type: 'response.completed', sequence_number: 1, response: { ...response, status: 'completed' } }))
  }

  private sendError(error: GatewayError): void {
    if (this.closed) return
    this.port.send(errorEvent(error.status, { type: error.type, code: error.code, message: error.message, param: error.param }))
  }

  private close(code: number, reason: string): void {
    if (this.closed) return
    this.closed = true
    this.disarmIdleTimer()
    this.current?.abort()
    this.drained()
    this.port.close(code, reason)
  }

  private armIdleTimer(): void {
    this.disarmIdleTimer()
    this.idleTimer = setTimeout(() => this.close(NORMAL_CLOSURE, 'idle'), this.limits.idleMs)
  }

  private disarmIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = undefined
  }
}

/**
 * A client message: a POST /v1/responses body with the socket protocol's `type` (and Codex's
 * `generate`, `client_metadata`); free-form because the Responses schema checks the body when
 * the call is served, as over HTTP.
 */
type SocketMessage = { [field: string]: unknown }

/** A socket past its call limit, in the code Codex reconnects on. */
class SocketLimitError extends GatewayError {
  readonly status = 400
  readonly code = CONNECTION_LIMIT_CODE
  readonly type = 'invalid_request_error'
}

/**
 * The Responses stream's `error` event (`code`, `message`, `param`), with the HTTP status the
 * same call would have had and the error object as over HTTP: Codex reads `status` and `error`.
 */
function errorEvent(status: number, error: SocketMessage): string {
  return JSON.stringify({ type: 'error', status, code: error.code ?? null, message: error.message ?? null, param: error.param ?? null, error })
}

function parseMessage(text: string): SocketMessage | GatewayError {
  const parsed = safeJson(text)
  if (parsed === undefined) return new InvalidRequestError('The message is not valid JSON.')
  if (!isObject(parsed)) return new InvalidRequestError('A message is a JSON object with a "type".')
  return parsed
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isObject(value: unknown): value is SocketMessage {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
