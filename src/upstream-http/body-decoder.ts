import { protocolError } from './errors'

/**
 * How a response body is framed on the wire (RFC 9112 §6): chunked, a content-length, or
 * everything until the server closes. A decoder takes network chunks as they come and hands
 * out the body's bytes as views into them, copying nothing.
 */
export interface BodyDecoder {
  /** Appends to `out` the body bytes `bytes` holds; past the body's end, counts the rest in `excess`. */
  push(bytes: Uint8Array, out: Uint8Array[]): void
  /** The body has ended (the last chunk, the last byte of its length). */
  readonly done: boolean
  /** Bytes that came after the body's end: a server that sends them cannot be trusted with the next response. */
  readonly excess: number
  /** The connection closed: true when that ends the body properly (read-until-close), false when it cut the body short. */
  closeEndsBody: boolean
}

/** The most bytes a chunk-size line (hex size and extensions) may take; real ones are a few bytes. */
export const MAX_CHUNK_LINE_BYTES = 4096
/** The most bytes of trailer fields; they are read past and dropped (nothing upstream sends them). */
export const MAX_TRAILER_BYTES = 64 * 1024
/** Hex digits of a chunk size: 12 is 2^48 bytes, past any body, and safe as a JavaScript number. */
const MAX_SIZE_DIGITS = 12

export class LengthDecoder implements BodyDecoder {
  excess = 0
  closeEndsBody = false
  constructor(private remaining: number) {}

  get done(): boolean {
    return this.remaining === 0
  }

  push(bytes: Uint8Array, out: Uint8Array[]): void {
    if (this.remaining === 0) {
      this.excess += bytes.length
      return
    }
    const taken = Math.min(bytes.length, this.remaining)
    out.push(taken === bytes.length ? bytes : bytes.subarray(0, taken))
    this.remaining -= taken
    this.excess += bytes.length - taken
  }
}

export class UntilCloseDecoder implements BodyDecoder {
  readonly excess = 0
  readonly done = false
  closeEndsBody = true

  push(bytes: Uint8Array, out: Uint8Array[]): void {
    out.push(bytes)
  }
}

const CR = 13
const LF = 10

/**
 * Chunked transfer coding: `<hex size>[;extensions]CRLF <data> CRLF` ... `0 CRLF [trailers] CRLF`.
 * A size line, like the trailers, is bounded, so a server that never ends one cannot grow memory;
 * a size that is not hex, or data not followed by CRLF, fails the body. Size lines are read byte
 * by byte as they come, with no text made of them: a stream has one per event it relays.
 */
export class ChunkedDecoder implements BodyDecoder {
  excess = 0
  closeEndsBody = false
  private state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size'
  /** Bytes of the current size or trailer line so far, its LF not counted. */
  private lineBytes = 0
  private lastWasCr = false
  /** The size line so far: its value, its hex digits, and where in the line it is. */
  private size = 0
  private sizeDigits = 0
  private sizePart: 'digits' | 'after-digits' | 'extensions' = 'digits'
  private trailerBytes = 0
  private remaining = 0
  /** Bytes of the CRLF after a chunk's data still to see. */
  private crlfLeft = 0

  get done(): boolean {
    return this.state === 'done'
  }

  push(bytes: Uint8Array, out: Uint8Array[]): void {
    let at = 0
    while (at < bytes.length) {
      switch (this.state) {
        case 'done':
          this.excess += bytes.length - at
          return
        case 'data': {
          const taken = Math.min(this.remaining, bytes.length - at)
          out.push(at === 0 && taken === bytes.length ? bytes : bytes.subarray(at, at + taken))
          at += taken
          this.remaining -= taken
          if (this.remaining === 0) {
            this.state = 'data-end'
            this.crlfLeft = 2
          }
          break
        }
        case 'data-end': {
          const expected = this.crlfLeft === 2 ? CR : LF
          if (bytes[at] !== expected) throw protocolError('chunk data not followed by CRLF')
          at++
          if (--this.crlfLeft === 0) this.state = 'size'
          break
        }
        case 'size':
        case 'trailer':
          at = this.readLine(bytes, at)
          break
      }
    }
  }

  /** Consumes bytes of a size or trailer line from `at`; acts on the line once its LF came. Returns where it stopped. */
  private readLine(bytes: Uint8Array, at: number): number {
    const bound = this.state === 'size' ? MAX_CHUNK_LINE_BYTES : MAX_TRAILER_BYTES - this.trailerBytes
    for (let index = at; index < bytes.length; index++) {
      const byte = bytes[index] as number
      if (byte === LF) {
        if (this.state === 'size') this.endSizeLine()
        else this.endTrailerLine()
        this.lineBytes = 0
        this.lastWasCr = false
        return index + 1
      }
      if (++this.lineBytes > bound) throw protocolError(this.state === 'size' ? 'a chunk-size line past its bound' : 'trailers past their bound')
      if (this.state === 'size') this.sizeByte(byte)
      this.lastWasCr = byte === CR
    }
    return bytes.length
  }

  /** One byte of a size line before its LF: hex digits, then optional spaces or tabs, then `;` and extensions (ignored). */
  private sizeByte(byte: number): void {
    if (this.sizePart === 'extensions') return
    if (byte === SEMICOLON) {
      this.sizePart = 'extensions'
      return
    }
    if (byte === CR || byte === SPACE || byte === TAB) {
      this.sizePart = 'after-digits'
      return
    }
    const digit = hexValue(byte)
    if (digit < 0 || this.sizePart !== 'digits' || this.sizeDigits === MAX_SIZE_DIGITS) throw protocolError('a chunk size that is not hexadecimal')
    this.size = this.size * 16 + digit
    this.sizeDigits++
  }

  private endSizeLine(): void {
    if (!this.lastWasCr) throw protocolError('a chunk-size line not ended by CRLF')
    if (this.sizeDigits === 0) throw protocolError('a chunk size that is not hexadecimal')
    this.remaining = this.size
    this.state = this.remaining === 0 ? 'trailer' : 'data'
    this.size = 0
    this.sizeDigits = 0
    this.sizePart = 'digits'
  }

  private endTrailerLine(): void {
    // The empty line (CRLF alone) ends the trailers and the body.
    if (this.lineBytes === 0 || (this.lineBytes === 1 && this.lastWasCr)) {
      this.state = 'done'
      return
    }
    this.trailerBytes += this.lineBytes + 1
  }
}

const SEMICOLON = 59
const SPACE = 32
const TAB = 9

/** A hex digit's value, or -1. */
function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48
  if (byte >= 97 && byte <= 102) return byte - 87
  if (byte >= 65 && byte <= 70) return byte - 55
  return -1
}
