import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Real servers for the own client's tests: a raw TCP server that answers each request with
 * bytes a test scripts (the wire's edge cases), a self-signed certificate made with the openssl
 * CLI, and a small CONNECT proxy.
 */

/** One connection as the raw server saw it: what came in, and a way to answer or close it. */
export interface RawConnection {
  id: number
  socket: Bun.Socket<RawState>
  /** Everything received so far, as text. */
  received: string
  closed: boolean
}

interface RawState {
  connection: RawConnection
}

/**
 * A TCP server that calls `onRequest` once per complete request head (and its content-length
 * body) received on a connection; the handler writes what it likes with `socket.write` and may
 * `end()` the socket. Counts connections, so tests can see keep-alive reuse.
 */
export function rawServer(onRequest: (connection: RawConnection, request: string, index: number) => void | Promise<void>) {
  const connections: RawConnection[] = []
  let requests = 0
  const pending = new Map<RawConnection, string>()
  const listener = Bun.listen<RawState>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        const connection: RawConnection = { id: connections.length, socket, received: '', closed: false }
        connections.push(connection)
        socket.data = { connection }
      },
      data(socket, bytes) {
        const { connection } = socket.data
        connection.received += bytes.toString('latin1')
        let buffer = (pending.get(connection) ?? '') + bytes.toString('latin1')
        for (;;) {
          const end = buffer.indexOf('\r\n\r\n')
          if (end < 0) break
          const length = Number(/\r\ncontent-length: (\d+)/i.exec(buffer.slice(0, end))?.[1] ?? 0)
          if (buffer.length < end + 4 + length) break
          const request = buffer.slice(0, end + 4 + length)
          buffer = buffer.slice(end + 4 + length)
          void onRequest(connection, request, requests++)
        }
        pending.set(connection, buffer)
      },
      close(socket) {
        socket.data.connection.closed = true
      },
    },
  })
  return {
    url: `http://127.0.0.1:${listener.port}`,
    port: listener.port,
    connections,
    get requests() {
      return requests
    },
    stop: () => listener.stop(true),
  }
}

/** A self-signed certificate (for localhost and 127.0.0.1 unless told), made at test time with the openssl CLI. */
export function selfSignedCertificate(subjectAltName = 'DNS:localhost,IP:127.0.0.1'): { dir: string; certFile: string; keyFile: string; remove: () => void } {
  if (!Bun.which('openssl')) throw new Error('these tests need the openssl CLI (apt-get install openssl)')
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-tls-'))
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  const made = Bun.spawnSync(
    [
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      `subjectAltName=${subjectAltName}`,
    ],
    { stderr: 'pipe' },
  )
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`)
  return { dir, certFile, keyFile, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

interface ProxyState {
  upstream?: Bun.Socket<ProxyState>
  client?: Bun.Socket<ProxyState>
  head: string
  pending: Buffer[]
}

/**
 * An http proxy: CONNECT tunnels bytes both ways; a request in absolute form is passed to its
 * host as it came (one request per connection, enough for the tests). Records each request line.
 */
export function connectProxy() {
  const lines: string[] = []
  const listener = Bun.listen<ProxyState>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        socket.data = { head: '', pending: [] }
      },
      data(socket, bytes) {
        const state = socket.data
        if (state.upstream) {
          state.upstream.write(bytes)
          return
        }
        state.head += bytes.toString('latin1')
        const end = state.head.indexOf('\r\n\r\n')
        if (end < 0) return
        const requestLine = state.head.slice(0, state.head.indexOf('\r\n'))
        lines.push(requestLine)
        const [method, target] = requestLine.split(' ')
        const tunnel = method === 'CONNECT'
        const where = tunnel ? new URL(`http://${target}`) : new URL(target ?? '')
        const rest = tunnel ? Buffer.from(state.head.slice(end + 4), 'latin1') : Buffer.from(state.head, 'latin1')
        Bun.connect<ProxyState>({
          hostname: where.hostname,
          port: Number(where.port || 80),
          data: { client: socket, head: '', pending: [] },
          socket: {
            open(upstream) {
              state.upstream = upstream
              if (tunnel) socket.write('HTTP/1.1 200 Connection Established\r\n\r\n')
              if (rest.length > 0) upstream.write(rest)
            },
            data(upstream, data) {
              upstream.data.client?.write(data)
            },
            close(upstream) {
              upstream.data.client?.end()
            },
            connectError: () => {
              socket.write('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n')
              socket.end()
            },
          },
        }).catch(() => undefined)
      },
      close(socket) {
        socket.data.upstream?.end()
      },
    },
  })
  return { url: `http://127.0.0.1:${listener.port}`, lines, stop: () => listener.stop(true) }
}

/** Reads a whole body through the pulled interface, as the relay does. */
export async function readPulled(body: { read(): Promise<Uint8Array | undefined> }): Promise<string> {
  const decoder = new TextDecoder()
  let text = ''
  for (let chunk = await body.read(); chunk !== undefined; chunk = await body.read()) text += decoder.decode(chunk, { stream: true })
  return text + decoder.decode()
}
