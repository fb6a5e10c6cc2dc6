import { InvalidRequestError, RequestTooLargeError } from '../errors/kinds'

/**
 * A streaming reader of multipart/form-data (RFC 7578) that keeps what a form may cost bounded
 * while it arrives: the number of parts, the size of each part's headers, and (through the
 * chunks it is given, see boundedChunks) the size and pace of the whole body. The framework's
 * reader (Request.formData) buffers the entire body first and then builds every part, so a
 * form of 900,000 empty parts cost seconds of CPU before anything could refuse it.
 */

/** A transcription form has a file and five fields; 50 leaves room for any client's extras. */
export const MAX_FORM_PARTS = 50
/** Content-Disposition and Content-Type of one part fit in far less. */
const MAX_PART_HEADER_BYTES = 16 * 1024
/** RFC 2046: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY_LENGTH = 70

export type FormValue = string | File
export type FormRecord = Record<string, FormValue | FormValue[]>

interface Part {
  name: string
  filename: string | undefined
  contentType: string | undefined
  chunks: Uint8Array[]
}

const CRLF = Buffer.from('\r\n')
const HEADER_END = Buffer.from('\r\n\r\n')
const DOUBLE_DASH = 0x2d

export function boundaryOf(contentType: string): string {
  const match = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType)
  const boundary = match?.[1] ?? match?.[2] ?? ''
  if (boundary.length === 0 || boundary.length > MAX_BOUNDARY_LENGTH) {
    throw new InvalidRequestError('The multipart body has no usable boundary in its Content-Type.')
  }
  return boundary
}

/**
 * The form's fields by name (a name given more than once has all its values, in order), files
 * as File. Field values stay strings: nothing in a form is parsed as JSON.
 */
export async function readMultipartForm(chunks: AsyncIterable<Uint8Array>, boundary: string, maxParts = MAX_FORM_PARTS): Promise<FormRecord> {
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  const parts: Part[] = []
  let part: Part | undefined
  let state = 'preamble' as 'preamble' | 'after-delimiter' | 'headers' | 'content' | 'done'
  // The first delimiter may open the body with no line break before it; starting the buffer
  // with one lets the same search find every delimiter.
  let pending: Buffer = Buffer.from(CRLF)

  /** Consumes what `pending` holds as far as it can; false when more bytes are needed. */
  const step = (): boolean => {
    switch (state) {
      case 'preamble': {
        const found = pending.indexOf(delimiter)
        if (found < 0) {
          pending = pending.subarray(Math.max(0, pending.length - delimiter.length + 1))
          return false
        }
        pending = pending.subarray(found + delimiter.length)
        state = 'after-delimiter'
        return true
      }
      case 'after-delimiter': {
        if (pending.length < 2) return false
        if (pending[0] === DOUBLE_DASH && pending[1] === DOUBLE_DASH) {
          state = 'done'
          return false
        }
        // The line may carry transport padding before its CRLF.
        const lineEnd = pending.indexOf(CRLF)
        if (lineEnd < 0) {
          if (pending.length > MAX_BOUNDARY_LENGTH) throw malformed('a boundary line does not end')
          return false
        }
        pending = pending.subarray(lineEnd + CRLF.length)
        state = 'headers'
        return true
      }
      case 'headers': {
        if (pending.length >= 2 && pending[0] === CRLF[0] && pending[1] === CRLF[1]) throw malformed('a part has no Content-Disposition')
        const headersEnd = pending.indexOf(HEADER_END)
        if (headersEnd < 0) {
          if (pending.length > MAX_PART_HEADER_BYTES) throw malformed('a part has headers over 16 KiB')
          return false
        }
        if (parts.length >= maxParts) throw new RequestTooLargeError(`The form has more than ${maxParts} parts.`)
        part = partFromHeaders(pending.subarray(0, headersEnd).toString('utf8'))
        parts.push(part)
        pending = pending.subarray(headersEnd + HEADER_END.length)
        state = 'content'
        return true
      }
      case 'content': {
        if (!part) throw malformed('content arrived before any part headers')
        const found = pending.indexOf(delimiter)
        if (found < 0) {
          // Everything but what could be the start of a delimiter split across chunks.
          const safe = Math.max(0, pending.length - delimiter.length + 1)
          if (safe > 0) part.chunks.push(pending.subarray(0, safe))
          pending = pending.subarray(safe)
          return false
        }
        if (found > 0) part.chunks.push(pending.subarray(0, found))
        pending = pending.subarray(found + delimiter.length)
        state = 'after-delimiter'
        return true
      }
      case 'done':
        return false
    }
  }

  for await (const chunk of chunks) {
    // After the closing delimiter comes an epilogue, which is read (the body limits still
    // apply) and ignored.
    if (state === 'done') continue
    pending = pending.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([pending, chunk])
    while (step());
  }
  if (state !== 'done') throw malformed('it ends before its closing boundary')
  return formRecord(parts)
}

function malformed(reason: string): InvalidRequestError {
  return new InvalidRequestError(`The multipart body is malformed: ${reason}.`)
}

function partFromHeaders(text: string): Part {
  let disposition: string | undefined
  let contentType: string | undefined
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon < 0) throw malformed('a part header has no colon')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    if (name === 'content-disposition') disposition = value
    else if (name === 'content-type') contentType = value
  }
  if (!disposition || !/^form-data\s*(;|$)/i.test(disposition)) throw malformed('a part has no Content-Disposition: form-data')
  const parameters = dispositionParameters(disposition)
  const name = parameters.get('name')
  if (name === undefined) throw malformed('a part has no name')
  return { name, filename: parameters.get('filename'), contentType, chunks: [] }
}

/** `name` and `filename` of a Content-Disposition, quoted (with backslash escapes) or bare. */
function dispositionParameters(disposition: string): Map<string, string> {
  const parameters = new Map<string, string>()
  const pattern = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g
  for (const match of disposition.matchAll(pattern)) {
    const key = (match[1] ?? '').toLowerCase()
    const value = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : (match[3] ?? '').trim()
    if (!parameters.has(key)) parameters.set(key, value)
  }
  return parameters
}

function formRecord(parts: Part[]): FormRecord {
  const grouped = new Map<string, FormValue[]>()
  for (const part of parts) {
    const value: FormValue =
      part.filename !== undefined
        ? new File([Buffer.concat(part.chunks)], part.filename, { type: part.contentType ?? 'application/octet-stream' })
        : Buffer.concat(part.chunks).toString('utf8')
    const values = grouped.get(part.name)
    if (values) values.push(value)
    else grouped.set(part.name, [value])
  }
  // fromEntries defines own properties, so a part named __proto__ cannot reach the prototype.
  return Object.fromEntries([...grouped].map(([name, values]) => [name, values.length === 1 && values[0] !== undefined ? values[0] : values]))
}
