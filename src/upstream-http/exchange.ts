import { type BodyDecoder, ChunkedDecoder, LengthDecoder, UntilCloseDecoder } from './body-decoder'
import type { ChunkReceiver, Connection } from './connection'
import { abortReason, closedEarly, protocolError } from './errors'
import type { OriginPool } from './pool'
import { attachRawBody, type BodySink, type RawBody, readableOf } from './raw-body'
import { type ResponseHead, readResponseHead } from './response-head'

/** Methods that change nothing on the server: a request of theirs that went unanswered may be sent again. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Sends one request on a pooled connection and returns the response once its head came; the body
 * is read later, pulled or piped. A reused socket the server closed while idle is replaced once,
 * but only when the request cannot have reached the server (the socket took no byte of it), or
 * when the request is idempotent and the server answered nothing: a POST that may have been
 * received is never sent twice (its completion may already be billed upstream).
 *
 * The signal aborts at any point (waiting for a socket, connecting, waiting for the head,
 * reading the body): the socket is destroyed and the pending step rejects with the signal's
 * reason, as fetch's does.
 */
export async function exchange(pool: OriginPool, method: string, request: Uint8Array, signal: AbortSignal | undefined): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const connection = await pool.acquire(signal)
    const mayRetry = attempt === 0 && connection.reused
    if (!connection.write(request)) {
      pool.release(connection, false)
      if (mayRetry) continue
      throw closedEarly('the request was sent')
    }
    const loan = new Loan(pool, connection, signal)
    try {
      return respond(await finalHead(connection), method, loan)
    } catch (error) {
      loan.giveBack(false)
      if (mayRetry && IDEMPOTENT.has(method) && connection.bytesReceived === 0 && !signal?.aborted) continue
      throw error
    }
  }
}

/**
 * A pooled connection lent to one exchange: the request's signal destroys it when it aborts,
 * and it goes back to its pool once, when the response is done with it. A class, made outside
 * the async exchange: a closure made in an async function keeps all of that function's
 * variables alive with it (the request's bytes among them) for as long as a stream is read.
 */
class Loan {
  private readonly onAbort: (() => void) | undefined
  private returned = false

  constructor(
    private readonly pool: OriginPool,
    readonly connection: Connection,
    private readonly signal: AbortSignal | undefined,
  ) {
    if (!signal) return
    this.onAbort = () => connection.destroy(abortReason(signal))
    signal.addEventListener('abort', this.onAbort, { once: true })
  }

  /** Back to the pool: kept for the next request when `reusable`, else closed. */
  giveBack(reusable: boolean): void {
    if (this.returned) return
    this.returned = true
    if (this.onAbort) this.signal?.removeEventListener('abort', this.onAbort)
    this.pool.release(this.connection, reusable)
  }
}

/** The final response head: interim 1xx heads (100 Continue, 103 Early Hints) are read past. */
async function finalHead(connection: Connection): Promise<ResponseHead> {
  for (;;) {
    const head = await readResponseHead(connection)
    if (head.status >= 200) return head
    // The client never asks to switch protocols.
    if (head.status === 101) throw protocolError('an unrequested 101 Switching Protocols')
  }
}

/** Builds the Response of a head; the loan is given back once the body was read to its end or given up. */
function respond(head: ResponseHead, method: string, loan: Loan): Response {
  if (head.status > 599) throw protocolError(`status ${head.status}`)
  const init = { status: head.status, statusText: head.statusText, headers: head.headers }
  const framing = bodyFraming(head, method)
  // Both framings at once is how responses get smuggled: read it chunked (RFC 9112 §6.3), never reuse the socket.
  const bothFramings = head.headers.has('transfer-encoding') && head.headers.has('content-length')
  const keepAlive = head.minorVersion === 1 && !/(^|,)\s*close\s*(,|$)/i.test(head.headers.get('connection') ?? '') && !framing.closeEndsBody && !bothFramings
  if (framing.done) {
    loan.giveBack(keepAlive && !loan.connection.hasUnread)
    const nullBody = head.status === 204 || head.status === 205 || head.status === 304
    return new Response(nullBody ? null : '', init)
  }
  const body = new SocketBody(loan, framing, keepAlive)
  const encoding = (head.headers.get('content-encoding') ?? 'identity').trim().toLowerCase()
  if (encoding === 'identity') return attachRawBody(new Response(readableOf(body), init), body)
  // Asked for identity, a server compressed anyway: decoded as fetch would, through a stream (no raw body).
  if (encoding !== 'gzip' && encoding !== 'deflate') {
    body.cancel()
    throw protocolError(`an unsupported content-encoding (${encoding})`)
  }
  const headers = new Headers(head.headers)
  headers.delete('content-encoding')
  headers.delete('content-length')
  const decompressed = readableOf(body).pipeThrough(new DecompressionStream(encoding) as unknown as ReadableWritablePair<Uint8Array, Uint8Array>)
  return new Response(decompressed, { ...init, headers })
}

/** How the body is framed (RFC 9112 §6.3): none, chunked, a length, or until the server closes. */
function bodyFraming(head: ResponseHead, method: string): BodyDecoder {
  if (method === 'HEAD' || head.status === 204 || head.status === 304) return new LengthDecoder(0)
  const transferEncoding = head.headers.get('transfer-encoding')
  if (transferEncoding !== null) {
    if (transferEncoding.trim().toLowerCase() !== 'chunked') throw protocolError(`an unsupported transfer-encoding (${transferEncoding})`)
    return new ChunkedDecoder()
  }
  const contentLength = head.headers.get('content-length')
  if (contentLength === null) return new UntilCloseDecoder()
  const lengths = new Set(contentLength.split(',').map((value) => value.trim()))
  const [length] = lengths
  if (lengths.size !== 1 || length === undefined || !/^\d{1,15}$/.test(length)) throw protocolError(`a bad content-length (${contentLength.slice(0, 40)})`)
  return new LengthDecoder(Number(length))
}

/**
 * A response body read from its socket, pulled or piped (raw-body.ts). A pull is one network
 * chunk's body bytes (a chunked body's pieces from one chunk joined), so a relay pays one
 * promise and one decode per chunk; a pipe diverts the socket's chunks (Connection.divert) and
 * hands each piece on as it comes, with no promise.
 */
class SocketBody implements RawBody, ChunkReceiver {
  private finished = false
  private failure: unknown
  private sink: BodySink | undefined
  /** A piped chunk's body pieces, reused from chunk to chunk. */
  private readonly pieces: Uint8Array[] = []

  private readonly connection: Connection

  constructor(
    private readonly loan: Loan,
    private readonly decoder: BodyDecoder,
    /** The response lets its socket serve another request once its body was read whole. */
    private readonly keepAlive: boolean,
  ) {
    this.connection = loan.connection
  }

  async read(): Promise<Uint8Array | undefined> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure
      if (this.finished) return undefined
      let chunk: Uint8Array | undefined
      const out: Uint8Array[] = []
      try {
        chunk = await this.connection.next()
        if (chunk === undefined && !this.decoder.closeEndsBody) throw closedEarly('the response body was complete')
        if (chunk !== undefined) this.decoder.push(chunk, out)
      } catch (error) {
        this.fail(error)
        throw error
      }
      if (chunk === undefined || this.decoder.done) this.end(chunk !== undefined && this.decoder.excess === 0 && !this.connection.hasUnread)
      if (out.length === 1) return out[0]
      if (out.length > 1) return Buffer.concat(out)
    }
  }

  pipe(sink: BodySink): void {
    this.sink = sink
    if (this.failure !== undefined) sink.fail(this.failure)
    else if (this.finished) sink.end()
    else this.connection.divert(this)
  }

  pause(): void {
    this.connection.pause()
  }

  resume(): void {
    this.connection.resume()
  }

  cancel(reason?: unknown): void {
    if (this.finished) return
    this.fail(reason ?? closedEarly('the response body was read'))
  }

  /** A piped network chunk: its body pieces go to the sink, then its end when it holds the last. */
  chunk(bytes: Uint8Array): void {
    const sink = this.sink
    if (this.finished || !sink) return
    const pieces = this.pieces
    pieces.length = 0
    try {
      this.decoder.push(bytes, pieces)
    } catch (error) {
      this.fail(error)
      return
    }
    for (const piece of pieces) {
      sink.bytes(piece)
      if (this.finished) break
    }
    // Kept past this chunk, a piece would keep its network chunk alive until the next.
    pieces.length = 0
    if (this.finished || !this.decoder.done) return
    this.connection.divert(undefined)
    this.end(this.decoder.excess === 0 && !this.connection.hasUnread)
    sink.end()
  }

  /** A piped body's socket closed: the end of a body read until close, else a body cut short. */
  closed(failure: unknown): void {
    if (this.finished) return
    if (failure === undefined && this.decoder.closeEndsBody) {
      this.end(false)
      this.sink?.end()
      return
    }
    this.fail(failure ?? closedEarly('the response body was complete'))
  }

  private fail(error: unknown): void {
    if (this.failure !== undefined) return
    this.failure = error
    // Not diverted any more, so the socket's close is not heard as a second failure.
    this.connection.divert(undefined)
    this.connection.destroy(error)
    this.end(false)
    this.sink?.fail(error)
  }

  private end(reusable: boolean): void {
    if (this.finished) return
    this.finished = true
    this.loan.giveBack(reusable && this.keepAlive)
  }
}
