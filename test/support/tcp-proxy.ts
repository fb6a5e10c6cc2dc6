import type { Socket, TCPSocketListener } from 'bun'

type ProxySocket = Socket<{ upstream?: Socket<unknown>; pending: Uint8Array[] }>

/**
 * A TCP proxy on loopback in front of a server (Postgres in the tests) that can go down, go
 * silent, and come back:
 * - `cut()` drops every connection and refuses new ones, as a network outage or a restarting
 *   database does;
 * - `blackhole()` is a partition: new connections are accepted, but no byte passes in either
 *   direction on any connection, old or new; nothing is closed, so a peer waits for ever;
 * - `restore()` serves again: connections held by a blackhole are dropped, new ones are piped.
 */
export class TcpProxy {
  private listener: TCPSocketListener<{ upstream?: Socket<unknown>; pending: Uint8Array[] }> | undefined
  private readonly open = new Set<Socket<unknown>>()
  private silent = false
  port = 0

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  start(): this {
    const proxy = this
    this.listener = Bun.listen<{ upstream?: Socket<unknown>; pending: Uint8Array[] }>({
      hostname: '127.0.0.1',
      port: this.port,
      socket: {
        open(client) {
          client.data = { pending: [] }
          proxy.open.add(client)
          // A partition: the connection is accepted and then nothing ever arrives.
          if (!proxy.silent) proxy.connectUpstream(client)
        },
        data(client, chunk) {
          if (proxy.silent) return
          if (client.data.upstream) client.data.upstream.write(chunk)
          else client.data.pending.push(new Uint8Array(chunk))
        },
        close(client) {
          proxy.open.delete(client)
          client.data.upstream?.end()
        },
        error(client) {
          client.data.upstream?.end()
        },
      },
    })
    this.port = this.listener.port
    return this
  }

  /** Drops every connection through the proxy and stops listening: connects are refused. */
  cut(): void {
    this.silent = false
    this.listener?.stop(true)
    this.listener = undefined
    this.dropAll()
  }

  /** Passes no more bytes either way and forwards no new connection, closing nothing: a partition. */
  blackhole(): void {
    if (!this.listener) this.start()
    this.silent = true
  }

  /** Serves again: after a blackhole its held connections are dropped, as a healed partition's peers find them dead. */
  restore(): void {
    if (this.silent) {
      this.silent = false
      this.dropAll()
    }
    if (!this.listener) this.start()
  }

  stop(): void {
    this.cut()
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const proxied = new URL(url)
    proxied.hostname = '127.0.0.1'
    proxied.port = String(this.port)
    return proxied.toString()
  }

  private dropAll(): void {
    for (const socket of this.open) socket.terminate()
    this.open.clear()
  }

  private connectUpstream(client: ProxySocket): void {
    const proxy = this
    void Bun.connect({
      hostname: this.targetHost,
      port: this.targetPort,
      socket: {
        open(upstream) {
          proxy.open.add(upstream)
          client.data.upstream = upstream
          for (const chunk of client.data.pending) upstream.write(chunk)
          client.data.pending = []
        },
        data(_upstream, chunk) {
          if (!proxy.silent) client.write(chunk)
        },
        close() {
          client.end()
        },
        error() {
          client.end()
        },
      },
    }).catch(() => client.end())
  }
}
