import { closedEarly, UpstreamNetworkError } from './errors'

/** Takes a diverted connection's chunks as they arrive (Connection.divert). */
export interface ChunkReceiver {
  chunk(bytes: Uint8Array): void
  /** The socket closed: `failure` when it broke or was destroyed, undefined when the server ended it. Called once. */
  closed(failure: unknown): void
}

/**
 * One socket to an upstream, read by pulling: `next()` hands out what the server sent in the
 * order it came, one network chunk at a time, and waits when nothing is there. Bun delivers
 * socket data by callback; this turns it into reads without a stream object in between. A
 * streamed body goes further (`divert`): each chunk goes to its receiver as the callback
 * delivers it, with no promise at all, which is what makes a relayed chunk cheap (measured:
 * docs/operations.md#how-upstreams-are-reached).
 *
 * Memory is bounded: past HIGH_WATER_BYTES unread, the socket is paused (the kernel's window
 * then slows the server), and resumed once the reader caught up.
 */
export class Connection {
  socket: Bun.Socket<Connection> | undefined
  /** Set by the pool: whether this connection served a response before (a stale idle socket is only ever a reused one). */
  reused = false
  /** Bytes the server sent since the pool last handed the connection out: none means a request went unanswered. */
  bytesReceived = 0
  /** Idle in its pool, waiting for the next request, since `idleSince` (performance.now()). */
  idle = false
  idleSince = 0
  /** Called once when the socket closes, whoever closed it (the pool forgets the connection). */
  onClosed: (() => void) | undefined
  /** While connecting: settles the connect (connect.ts) with its failure, or with none once the socket is usable. */
  settleOpen: ((failure?: unknown) => void) | undefined
  private readonly chunks: Uint8Array[] = []
  private queuedBytes = 0
  private paused = false
  private ended = false
  private failure: unknown
  private waiter: { resolve: (chunk: Uint8Array | undefined) => void; reject: (error: unknown) => void } | undefined
  /** The part of a request the socket could not take yet; written on drain. */
  private unwritten: Uint8Array | undefined
  /** Where chunks go while diverted, instead of the queue. */
  private receiver: ChunkReceiver | undefined

  /** Bytes the server sent that nobody read yet. */
  get hasUnread(): boolean {
    return this.chunks.length > 0
  }

  get closed(): boolean {
    return this.ended || this.failure !== undefined
  }

  /**
   * Writes `bytes`; what the socket cannot take now goes on drain. Returns false when the socket
   * took nothing because it was already closed: then the request never reached the server.
   */
  write(bytes: Uint8Array): boolean {
    const socket = this.socket
    if (!socket || this.closed) return false
    const written = socket.write(bytes)
    if (written < 0) return false
    if (written < bytes.length) this.unwritten = bytes.subarray(written)
    return true
  }

  /** The next chunk the server sent; undefined once it closed; the failure when it broke or was destroyed. */
  next(): Promise<Uint8Array | undefined> {
    const chunk = this.chunks.shift()
    if (chunk) {
      this.queuedBytes -= chunk.length
      if (this.paused && this.queuedBytes < LOW_WATER_BYTES) {
        this.paused = false
        this.socket?.resume()
      }
      return Promise.resolve(chunk)
    }
    if (this.failure !== undefined) return Promise.reject(this.failure)
    if (this.ended) return Promise.resolve(undefined)
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject }
    })
  }

  /**
   * Hands every chunk to `receiver` from now on, first what is queued, then each as it arrives,
   * and the socket's close once; `undefined` ends the diversion (the body is done and the rest,
   * if any, is queued again). A diverted socket's flow is the receiver's: `pause` and `resume`.
   */
  divert(receiver: ChunkReceiver | undefined): void {
    this.receiver = receiver
    if (!receiver) return
    for (let chunk = this.chunks.shift(); chunk && this.receiver === receiver; chunk = this.chunks.shift()) {
      this.queuedBytes -= chunk.length
      receiver.chunk(chunk)
    }
    if (this.receiver !== receiver) return
    if (this.paused) {
      this.paused = false
      this.socket?.resume()
    }
    if (this.closed) this.tellReceiver()
  }

  pause(): void {
    this.socket?.pause()
  }

  resume(): void {
    if (!this.paused) this.socket?.resume()
  }

  /** Puts back bytes read past the end of a response head, to be the next chunk. */
  unshift(bytes: Uint8Array): void {
    if (bytes.length === 0) return
    this.chunks.unshift(bytes)
    this.queuedBytes += bytes.length
  }

  /** Closes the socket now (an abort, a broken response, an idle timeout); a pending read fails with `reason`. */
  destroy(reason: unknown = closedEarly('the response was complete')): void {
    if (this.failure === undefined) this.failure = reason
    this.chunks.length = 0
    this.queuedBytes = 0
    this.wake()
    this.opened(reason)
    this.socket?.terminate()
    this.notifyClosed()
    this.tellReceiver()
  }

  // The socket's events (socket-handlers.ts routes them here).

  received(bytes: Uint8Array): void {
    if (this.closed) return
    this.bytesReceived += bytes.length
    if (this.receiver) {
      this.receiver.chunk(bytes)
      return
    }
    const waiter = this.waiter
    if (waiter && this.chunks.length === 0) {
      this.waiter = undefined
      waiter.resolve(bytes)
      return
    }
    this.chunks.push(bytes)
    this.queuedBytes += bytes.length
    if (!this.paused && this.queuedBytes > HIGH_WATER_BYTES) {
      this.paused = true
      this.socket?.pause()
    }
  }

  drained(): void {
    const rest = this.unwritten
    if (!rest || !this.socket) return
    this.unwritten = undefined
    this.write(rest)
  }

  /** The server closed its side (FIN) or the socket closed: what is queued can still be read. */
  endedByServer(error?: Error): void {
    if (error && this.failure === undefined && !this.ended) this.failure = new UpstreamNetworkError('ECONNRESET', error.message, { cause: error })
    this.ended = true
    this.wake()
    this.notifyClosed()
    this.tellReceiver()
  }

  /** A diverted connection closed: its receiver hears it once. */
  private tellReceiver(): void {
    const receiver = this.receiver
    if (!receiver || !this.closed) return
    this.receiver = undefined
    receiver.closed(this.failure)
  }

  private wake(): void {
    const waiter = this.waiter
    if (!waiter) return
    this.waiter = undefined
    if (this.failure !== undefined) waiter.reject(this.failure)
    else waiter.resolve(undefined)
  }

  /** Settles a pending connect once; later events find nothing to settle. */
  opened(failure?: unknown): void {
    const settle = this.settleOpen
    this.settleOpen = undefined
    settle?.(failure)
  }

  private notifyClosed(): void {
    const onClosed = this.onClosed
    this.onClosed = undefined
    onClosed?.()
  }
}

/** Unread bytes past which the socket stops reading: a few SSE events' worth, far below any event bound. */
const HIGH_WATER_BYTES = 256 * 1024
const LOW_WATER_BYTES = 64 * 1024
