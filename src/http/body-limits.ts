import { ClientClosedError, RequestTimeoutError, RequestTooLargeError } from '../errors/kinds'
import { concatBytes } from '../util/concat-bytes'

const MiB = 1024 * 1024

/**
 * Per-path limits on request bodies, each the largest size accepted: under 10 MiB for videos
 * (docs/api.md#limits says "under", so exactly 10 MiB is already too large), a 25 MiB audio file plus
 * its form for transcriptions, 32 MB (Anthropic's own limit for messages) for the rest.
 */
const LIMITS: Record<string, number> = { '/v1/videos/generations': 10 * MiB - 1, '/v1/audio/transcriptions': 26 * MiB }
const DEFAULT_LIMIT = 32 * MiB

/** What the server accepts at all, above every path's limit: a bound on memory per request. */
export const SERVER_BODY_LIMIT = 64 * MiB

/**
 * How long a body may take to arrive. Every body gets `graceMs`, plus one second for each
 * `minimumBytesPerSecond` it has delivered, and may never be silent for longer than `idleMs`.
 * A client on the slowest mobile link (8 kbit/s) never meets the bound, while one that trickles
 * a byte every few seconds to hold a connection and a buffer open is cut after `graceMs`. The
 * time is earned, not fixed, so a 26 MiB upload over a slow line still finishes.
 */
export interface BodyTiming {
  graceMs: number
  minimumBytesPerSecond: number
  idleMs: number
}

export const BODY_TIMING: BodyTiming = { graceMs: 10_000, minimumBytesPerSecond: 1024, idleMs: 30_000 }

/** 413 at once when the declared length is over the path's limit, before a byte is read. */
export function checkDeclaredLength(request: Request, limit: number): void {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > limit) throw tooLarge(limit)
}

export function bodyLimitFor(pathname: string): number {
  return LIMITS[pathname] ?? DEFAULT_LIMIT
}

function tooLarge(limit: number): RequestTooLargeError {
  return new RequestTooLargeError(`The request body is larger than ${Math.round(limit / MiB)} MiB.`)
}

const TIMED_OUT = Symbol('timed out')

/** A body read fails only when its connection closed early: the client left (499), no bug of ours. */
function clientLeft(cause: unknown): never {
  throw new ClientClosedError('The client closed the connection before its request body arrived.', { cause })
}

/**
 * The body's chunks as they arrive, refused with 413 as soon as it is known to be too large
 * (from Content-Length before anything is read, or while counting a body of unannounced
 * length) and with 408 when it arrives too slowly (BodyTiming). However the reading stops
 * early, the rest of the body is cancelled, so the server stops buffering it.
 */
export async function* boundedChunks(request: Request, limit: number, timing: BodyTiming = BODY_TIMING): AsyncGenerator<Uint8Array> {
  checkDeclaredLength(request, limit)
  if (!request.body) return
  const reader = request.body.getReader()
  const startedAt = performance.now()
  let received = 0
  let finished = false
  try {
    while (true) {
      const now = performance.now()
      const earned = startedAt + timing.graceMs + (received / timing.minimumBytesPerSecond) * 1000
      const next = await readWithin(reader, Math.min(earned, now + timing.idleMs) - now)
      if (next === TIMED_OUT) throw new RequestTimeoutError('The request body arrived too slowly; send it at once.')
      if (next.done) {
        finished = true
        return
      }
      received += next.value.byteLength
      if (received > limit) throw tooLarge(limit)
      yield next.value
    }
  } finally {
    if (!finished) reader.cancel().catch(() => {})
  }
}

async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  waitMs: number,
): Promise<Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>> | typeof TIMED_OUT> {
  if (waitMs <= 0) return TIMED_OUT
  let timer: ReturnType<typeof setTimeout> | undefined
  const silence = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), waitMs)
  })
  try {
    return await Promise.race([reader.read().catch(clientLeft), silence])
  } finally {
    clearTimeout(timer)
  }
}

/** Bodies of at most this declared length are read whole by the runtime (readDeclared). */
const WHOLE_READ_LIMIT = 64 * 1024

/** The whole body's bytes: a small body of declared length at once, anything else through boundedChunks. */
export async function readLimited(request: Request, limit: number, timing: BodyTiming = BODY_TIMING): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  // A length over the limit goes the chunked way, whose first step refuses it with 413.
  if (request.body && Number.isSafeInteger(declared) && declared > 0 && declared <= Math.min(limit, WHOLE_READ_LIMIT))
    return readDeclared(request, declared, timing)
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of boundedChunks(request, limit, timing)) {
    chunks.push(chunk)
    size += chunk.byteLength
  }
  return concatBytes(chunks, size)
}

/**
 * A small body of declared length, read whole by the runtime. Reading a server request's body
 * through a stream reader makes Bun allocate 64 KB or more per read, which was most of the
 * garbage a typical request made (measured: a bare proxy reading its bodies that way collected
 * garbage 50 times as often). The body must arrive within the time its declared length earns at
 * the minimum pace, at most `graceMs` plus 64 s; a client that falls silent is cut by the
 * server's idle timeout instead of `idleMs`.
 */
async function readDeclared(request: Request, declared: number, timing: BodyTiming): Promise<Uint8Array> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timing.graceMs + (declared / timing.minimumBytesPerSecond) * 1000)
  })
  try {
    const bytes = await Promise.race([request.bytes().catch(clientLeft), late])
    if (bytes === TIMED_OUT) throw new RequestTimeoutError('The request body arrived too slowly; send it at once.')
    return bytes
  } finally {
    clearTimeout(timer)
  }
}
