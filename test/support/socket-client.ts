/**
 * A WebSocket client for tests (Bun's WebSocket): collects the JSON text messages it receives
 * and hands them out in order, up to the first of a given type.
 */
export class SocketClient {
  private readonly received: any[] = []
  private waiter: (() => void) | undefined
  /** Resolves with the close code and reason once the socket closes, by either side. */
  readonly closed: Promise<{ code: number; reason: string }>

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      this.received.push(JSON.parse(String(event.data)))
      this.waiter?.()
    })
    this.closed = new Promise((resolve) => {
      socket.addEventListener('close', (event) => {
        resolve({ code: event.code, reason: event.reason })
        this.waiter?.()
      })
    })
  }

  /** Opens a socket; rejects when the handshake is refused. */
  static open(url: string, headers: Record<string, string>): Promise<SocketClient> {
    const socket = new WebSocket(url, { headers } as unknown as string[])
    const client = new SocketClient(socket)
    return new Promise((resolve, reject) => {
      socket.addEventListener('open', () => resolve(client), { once: true })
      socket.addEventListener('error', () => reject(new Error('the WebSocket handshake failed')), { once: true })
      socket.addEventListener('close', () => reject(new Error('the WebSocket closed during its handshake')), { once: true })
    })
  }

  send(message: string | Uint8Array): void {
    this.socket.send(typeof message === 'string' ? message : new Uint8Array(message))
  }

  close(): void {
    this.socket.close()
  }

  /** The messages received since the last call, through the first of `type`; throws when the socket closes first. */
  async untilType(type: string): Promise<any[]> {
    let closed = false
    void this.closed.then(() => {
      closed = true
    })
    for (;;) {
      const index = this.received.findIndex((message) => message.type === type)
      if (index >= 0) return this.received.splice(0, index + 1)
      if (closed || this.socket.readyState === WebSocket.CLOSED)
        throw new Error(`the socket closed before a ${type} message; received ${JSON.stringify(this.received).slice(0, 500)}`)
      await new Promise<void>((resolve) => {
        this.waiter = resolve
      })
    }
  }
}
