import type { Connection } from './connection'
import { closedEarly, protocolError } from './errors'

/**
 * The most bytes a response head (status line and headers) may take. Real heads are well under
 * 8 KB; the bound keeps a hostile or broken upstream that never ends its head from growing the
 * gateway's memory.
 */
export const MAX_HEAD_BYTES = 64 * 1024

/** A response's status line and headers, as the upstream sent them. */
export interface ResponseHead {
  status: number
  statusText: string
  /** HTTP/1.0 closes after the response unless told otherwise; 1.1 keeps the connection. */
  minorVersion: 0 | 1
  headers: Headers
}

const HEAD_END = Buffer.from('\r\n\r\n')

/**
 * Reads one response head from the connection; the bytes after it (the start of the body) are
 * put back for the body's reader. Fails with a protocol error past MAX_HEAD_BYTES or on a head
 * that is not HTTP/1.x, and when the connection closes before the head ended.
 */
export async function readResponseHead(connection: Connection): Promise<ResponseHead> {
  let buffered: Buffer | undefined
  for (;;) {
    const chunk = await connection.next()
    if (chunk === undefined) throw closedEarly(buffered ? 'the response head was complete' : 'it answered')
    const searchFrom = buffered ? Math.max(0, buffered.length - 3) : 0
    buffered = buffered ? Buffer.concat([buffered, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const end = buffered.indexOf(HEAD_END, searchFrom)
    if (end < 0) {
      if (buffered.length > MAX_HEAD_BYTES) throw protocolError(`a response head longer than ${MAX_HEAD_BYTES} bytes`)
      continue
    }
    if (end > MAX_HEAD_BYTES) throw protocolError(`a response head longer than ${MAX_HEAD_BYTES} bytes`)
    connection.unshift(buffered.subarray(end + HEAD_END.length))
    return parseHead(buffered.toString('latin1', 0, end))
  }
}

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/

function parseHead(text: string): ResponseHead {
  const lines = text.split('\r\n')
  const match = STATUS_LINE.exec(lines[0] ?? '')
  if (!match) throw protocolError('a status line that is not HTTP/1.x')
  const headers = new Headers()
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index] ?? ''
    const colon = line.indexOf(':')
    // An obsolete folded line (RFC 9112 §5.2) or a line without a name is refused, not guessed at.
    if (colon <= 0 || line.charCodeAt(0) === 32 || line.charCodeAt(0) === 9) throw protocolError('a malformed header line')
    try {
      headers.append(line.slice(0, colon), line.slice(colon + 1).trim())
    } catch {
      throw protocolError('a header with characters HTTP does not allow')
    }
  }
  return { status: Number(match[2]), statusText: match[3] ?? '', minorVersion: match[1] === '0' ? 0 : 1, headers }
}
