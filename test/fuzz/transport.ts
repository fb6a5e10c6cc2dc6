import type { FuzzRequest } from './mutations'

/** What came back: `status` 0 when the connection closed without an answer. */
export interface Answer {
  status: number
  /** Headers and body as text (raw answers keep their framing: the checks only search it). */
  text: string
  elapsedMs: number
  /** Set when nothing came back in time, or the connection failed. */
  error?: string
}

const encoder = new TextEncoder()

export async function send(origin: URL, request: FuzzRequest, timeoutMs: number): Promise<Answer> {
  return request.transport === 'raw' ? sendRaw(origin, request, timeoutMs) : sendFetch(origin, request, timeoutMs)
}

async function sendFetch(origin: URL, request: FuzzRequest, timeoutMs: number): Promise<Answer> {
  const startedAt = performance.now()
  try {
    const headers = new Headers()
    for (const [name, value] of request.headers) headers.append(name, value)
    const response = await fetch(new URL(request.path, origin), {
      method: request.method,
      headers,
      body: request.body as BodyInit | undefined,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
      // Compressed answers would hide a leaked secret from the text search.
      decompress: true,
    })
    const body = await response.text()
    const head = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n')
    return { status: response.status, text: `${head}\n\n${body}`, elapsedMs: performance.now() - startedAt }
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    // fetch itself refusing a request (a header value it will not send) is the fuzzer's problem, not the gateway's.
    const refusedLocally = error instanceof TypeError && /header|method|body|invalid/i.test(error.message) && !/ECONN|socket|closed/i.test(error.message)
    return { status: refusedLocally ? -1 : 0, text: '', elapsedMs: performance.now() - startedAt, error: message }
  }
}

/** The request's bytes on the wire, with the framing abuse a `raw-http` note asks for. */
export function rawBytes(origin: URL, request: FuzzRequest): Uint8Array {
  const body = request.body ?? new Uint8Array(0)
  const version = request.note === 'raw: HTTP/1.0' ? 'HTTP/1.0' : 'HTTP/1.1'
  const lines = [`${request.method} ${request.path} ${version}`]
  const names = new Set(request.headers.map(([name]) => name.toLowerCase()))
  if (!names.has('host')) lines.push(`host: ${origin.host}`)
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`)
  lines.push('connection: close')
  let payload: Uint8Array = body
  switch (request.note) {
    case 'raw: body longer than content-length':
      lines.push(`content-length: ${Math.max(0, body.length - 5)}`)
      break
    case 'raw: body shorter than content-length':
      lines.push(`content-length: ${body.length + 100}`)
      break
    case 'raw: bad chunked framing':
      lines.push('transfer-encoding: chunked')
      payload = Buffer.concat([encoder.encode(`zz\r\n`), body, encoder.encode('\r\n0\r\n')])
      break
    case 'raw: both content-length and chunked':
      lines.push(`content-length: ${body.length}`, 'transfer-encoding: chunked')
      break
    case 'raw: header without colon':
      lines.push('x-broken header line', `content-length: ${body.length}`)
      break
    case 'raw: obs-fold continuation':
      lines.push('x-folded: first', '  continued', `content-length: ${body.length}`)
      break
    case 'raw: NUL in header name':
      lines.push('x-n\u0000ul: v', `content-length: ${body.length}`)
      break
    default:
      if (!names.has('content-length') && !names.has('transfer-encoding') && (body.length || request.method === 'POST'))
        lines.push(`content-length: ${body.length}`)
  }
  // Header text goes out byte for byte: Latin-1, so a U+00E9 stays one byte and U+0000 a NUL.
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload])
}

function sendRaw(origin: URL, request: FuzzRequest, timeoutMs: number): Promise<Answer> {
  const startedAt = performance.now()
  const bytes = rawBytes(origin, request)
  return new Promise((resolve) => {
    const received: Buffer[] = []
    let settled = false
    const finish = (error?: string) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      const text = Buffer.concat(received).toString('latin1')
      // Interim answers (100 Continue) come first; the final status is the first that is not 1xx.
      const finals = [...text.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3})/g)].map((match) => Number(match[1])).filter((code) => code >= 200)
      const status = finals[0] ?? 0
      resolve({ status, text, elapsedMs: performance.now() - startedAt, error })
    }
    const timer = setTimeout(() => {
      finish(`no answer within ${timeoutMs} ms`)
      socketRef?.end()
    }, timeoutMs)
    let socketRef: { end(): void } | undefined
    let pending = bytes
    Bun.connect({
      hostname: origin.hostname,
      port: Number(origin.port),
      socket: {
        open(socket) {
          socketRef = socket
          pending = pending.subarray(socket.write(pending))
          // A request that claims more body than it sends would wait for the server to give up; half-close says "no more".
          if (pending.length === 0 && request.note === 'raw: body shorter than content-length') socket.shutdown(true)
        },
        drain(socket) {
          if (pending.length) pending = pending.subarray(socket.write(pending))
        },
        data(_socket, data) {
          received.push(Buffer.from(data))
        },
        close() {
          finish()
        },
        error(_socket, error) {
          finish(String(error))
        },
      },
    }).catch((error: unknown) => finish(String(error)))
  })
}
