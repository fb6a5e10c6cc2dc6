import { InvalidRequestError } from '../errors/kinds'
import { bodyLimitFor, readLimited } from './body-limits'

/**
 * Request bodies are read as strict UTF-8 JSON whatever the content type says (curl's `-d`
 * sends form encoding), except multipart forms. A body that fails is not rejected here but
 * marked, so that authentication still answers first.
 */
export class MalformedBody {
  constructor(readonly reason: string) {}

  toError(): InvalidRequestError {
    return new InvalidRequestError(`The request body is not valid JSON: ${this.reason}`)
  }
}

/**
 * How deeply arrays and objects may nest. Real tool schemas (JSON Schema inside a tool list
 * inside a request) rarely pass 20 levels; 128 leaves room for any of them. Without a bound a
 * 200 KB body of `[` costs seconds of recursion on the one event loop every tenant shares.
 */
export const MAX_JSON_DEPTH = 128

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

export async function parseJsonBody(request: Request): Promise<unknown> {
  const bytes = await readLimited(request, bodyLimitFor(new URL(request.url).pathname))
  // null, not undefined: undefined would hand the body to the framework's own parser.
  if (bytes.byteLength === 0) return null
  if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) return new MalformedBody(`it nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`)
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  } catch {
    return new MalformedBody('it is not valid UTF-8.')
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    return new MalformedBody(error instanceof Error ? error.message : 'unparseable.')
  }
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d

/**
 * Whether the JSON text in `bytes` opens more than `limit` arrays or objects inside each other,
 * in one pass before anything is parsed. Brackets inside strings do not count; a backslash in a
 * string escapes the byte after it. Working on UTF-8 bytes is safe: every byte of a multi-byte
 * character is at least 0x80, so none can be mistaken for a quote or a bracket. Text that is
 * not JSON at all is left to JSON.parse to refuse.
 */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index]
    if (byte === QUOTE) {
      index = closingQuote(bytes, index + 1)
      if (index < 0) return false
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > limit) return true
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth--
    }
  }
  return false
}

/**
 * The index of the quote that ends the string starting at `from`, or -1. Strings are skipped
 * with the native indexOf, not byte by byte: a request's bulk is mostly strings (a base64
 * image, a long prompt). A quote ends the string unless an odd number of backslashes precede it.
 */
function closingQuote(bytes: Uint8Array, from: number): number {
  let quote = bytes.indexOf(QUOTE, from)
  while (quote >= 0) {
    let backslashes = 0
    while (quote - backslashes - 1 >= from && bytes[quote - backslashes - 1] === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return quote
    quote = bytes.indexOf(QUOTE, quote + 1)
  }
  return -1
}
