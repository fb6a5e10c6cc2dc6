import { type Endpoint, openConnection } from './connect'
import type { Connection } from './connection'
import { abortReason } from './errors'

export interface PoolLimits {
  /** Sockets open at once to one origin (through one proxy); a request past it waits for one to come free. */
  maxSocketsPerOrigin: number
  /** Idle sockets kept per origin; past it the oldest is closed. */
  maxIdlePerOrigin: number
  /** An idle socket is closed after this long (rounded to whole seconds, at least one): below the usual server keep-alive of 5 s, so the server rarely closes one under a new request. */
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
    connection.socket?.timeout(Math.max(1, Math.round(this.limits.idleTimeoutMs / 1000)))
    connection.socket?.unref()
    this.idle.push(connection)
    if (this.idle.length > this.limits.maxIdlePerOrigin) this.idle.shift()?.destroy()
  }

  /** Closes every idle socket (the client is closing). */
  closeIdle(): void {
    for (const connection of this.idle.splice(0)) connection.destroy()
  }

  private take(connection: Connection): Connection {
    connection.idle = false
    connection.socket?.timeout(0)
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
