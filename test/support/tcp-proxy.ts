import type { Socket, TCPSocketListener } from 'bun'

/**
 * A TCP proxy on loopback in front of a server (Postgres in the tests) that can be cut and
 * restored: `cut()` drops every connection and refuses new ones, as a network outage or a
 * restarting database does; `restore()` listens again on the same port.
 */
export class TcpProxy {
  private listener: TCPSocketListener<{ upstream?: Socket<unknown>; pending: Uint8Array[] }> | undefined
  private readonly open = new Set<Socket<unknown>>()
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
          void Bun.connect({
            hostname: proxy.targetHost,
            port: proxy.targetPort,
            socket: {
              open(upstream) {
                proxy.open.add(upstream)
                client.data.upstream = upstream
                for (const chunk of client.data.pending) upstream.write(chunk)
                client.data.pending = []
              },
              data(_upstream, chunk) {
                client.write(chunk)
              },
              close() {
                client.end()
              },
              error() {
                client.end()
              },
            },
          }).catch(() => client.end())
        },
        data(client, chunk) {
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
    this.listener?.stop(true)
    this.listener = undefined
    for (const socket of this.open) socket.terminate()
    this.open.clear()
  }

  restore(): void {
    this.start()
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
}
