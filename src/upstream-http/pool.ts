import { type Endpoint, openConnection } from './connect'
import type { Connection } from './connection'
import { abortReason } from './errors'

export interface PoolLimits {
  /** Sockets open at once to one origin (through one proxy); a request past it waits for one to come free. */
  maxSocketsPerOrigin: number
  /** Idle sockets kept per origin; past it the oldest is closed. */
  maxIdlePerOrigin: number
  /** An idle socket is closed after this long: below the usual server keep-alive (5 s for Node), so a server rarely closes one under a new request. */
  idleTimeoutMs: number
  connectTimeoutMs: number
}

interface Waiter {
  resolve: (connection: Connection) => void
  reject: (error: unknown) => void
  signal: AbortSignal | undefined
}

/**
 * The keep-alive sockets of one origin. A socket goes back to the pool only after its response
 * was read to the end and the server did not say `connection: close` (response.ts decides);
 * the last one returned is the first one reused, so the rest can age out. Idle sockets do not
 * keep the process alive.
 */
export class OriginPool {
  private open = 0
  private readonly idle: Connection[] = []
  private readonly waiters: Waiter[] = []
  private sweeper: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly endpoint: Endpoint,
    private readonly proxy: Endpoint | undefined,
    private readonly limits: PoolLimits,
  ) {}

  /** An idle socket, a new one, or, at the limit, the next one that comes free (or the signal's abort). */
  acquire(signal: AbortSignal | undefined): Promise<Connection> {
    for (let connection = this.idle.pop(); connection; connection = this.idle.pop()) {
      if (connection.closed) continue
      return Promise.resolve(this.take(connection))
    }
    if (this.open < this.limits.maxSocketsPerOrigin) return this.dial(signal)
    if (signal?.aborted) return Promise.reject(abortReason(signal))
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal }
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter)
        if (index >= 0) this.waiters.splice(index, 1)
        reject(abortReason(signal as AbortSignal))
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      waiter.resolve = (connection) => {
        signal?.removeEventListener('abort', onAbort)
        resolve(connection)
      }
      waiter.reject = (error) => {
        signal?.removeEventListener('abort', onAbort)
        reject(error)
      }
      this.waiters.push(waiter)
    })
  }

  /** A connection whose exchange is over: kept for the next request when `reusable`, else closed. */
  release(connection: Connection, reusable: boolean): void {
    if (!reusable || connection.closed) {
      connection.destroy()
      return
    }
    connection.reused = true
    const waiter = this.waiters.shift()
    if (waiter) {
      waiter.resolve(this.take(connection))
      return
    }
    connection.idle = true
    connection.idleSince = performance.now()
    connection.socket?.unref()
    this.idle.push(connection)
    if (this.idle.length > this.limits.maxIdlePerOrigin) this.idle.shift()?.destroy()
    this.sweeper ??= setInterval(() => this.closeAged(), Math.min(1000, this.limits.idleTimeoutMs / 4))
    this.sweeper.unref()
  }

  /**
   * Closes the sockets idle past the timeout (the oldest are first in the list). One timer per
   * pool while anything is idle, rather than the socket's own timeout, whose clock ticks in
   * steps of seconds: a socket must close before the server's keep-alive gives up on it.
   */
  private closeAged(): void {
    const limit = performance.now() - this.limits.idleTimeoutMs
    while (this.idle.length > 0 && (this.idle[0] as Connection).idleSince <= limit) this.idle.shift()?.destroy()
    if (this.idle.length === 0 && this.sweeper) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }

  /** Closes every idle socket (the client is closing). */
  closeIdle(): void {
    for (const connection of this.idle.splice(0)) connection.destroy()
    clearInterval(this.sweeper)
    this.sweeper = undefined
  }

  private take(connection: Connection): Connection {
    connection.idle = false
    connection.socket?.ref()
    connection.bytesReceived = 0
    return connection
  }

  private async dial(signal: AbortSignal | undefined): Promise<Connection> {
    this.open++
    let connection: Connection
    try {
      connection = await openConnection(this.endpoint, this.proxy, { connectTimeoutMs: this.limits.connectTimeoutMs, signal })
    } catch (error) {
      this.open--
      this.serveWaiters()
      throw error
    }
    connection.onClosed = () => this.forget(connection)
    // Closed between its connect and now: nothing told the pool yet.
    if (connection.closed) connection.destroy()
    return connection
  }

  private forget(connection: Connection): void {
    this.open--
    if (connection.idle) {
      const index = this.idle.indexOf(connection)
      if (index >= 0) this.idle.splice(index, 1)
    }
    this.serveWaiters()
  }

  /** A socket closed: requests waiting for one may dial now. */
  private serveWaiters(): void {
    while (this.waiters.length > 0 && this.open < this.limits.maxSocketsPerOrigin) {
      const waiter = this.waiters.shift() as Waiter
      this.dial(waiter.signal).then(waiter.resolve, waiter.reject)
    }
  }
}
