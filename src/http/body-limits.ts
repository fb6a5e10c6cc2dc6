import { RequestTooLargeError } from '../errors/kinds'

const MiB = 1024 * 1024

/**
 * Per-path limits on request bodies, each the largest size accepted: under 10 MiB for videos
 * (API.md §8 says "under", so exactly 10 MiB is already too large), a 25 MiB audio file plus
 * its form for transcriptions, 32 MB (Anthropic's own limit for messages) for the rest.
 */
const LIMITS: Record<string, number> = { '/v1/videos/generations': 10 * MiB - 1, '/v1/audio/transcriptions': 26 * MiB }
const DEFAULT_LIMIT = 32 * MiB

/** What the server accepts at all, above every path's limit: a bound on memory per request. */
export const SERVER_BODY_LIMIT = 64 * MiB

/** 413 at once when the declared length is over the path's limit, before a byte is read. */
export function checkDeclaredLength(request: Request, limit: number): void {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > limit) throw new RequestTooLargeError(`The request body is larger than ${Math.round(limit / MiB)} MiB.`)
}

export function bodyLimitFor(pathname: string): number {
  return LIMITS[pathname] ?? DEFAULT_LIMIT
}

/**
 * The body's bytes, refused with 413 as soon as it is known to be too large: from
 * Content-Length before anything is read, or while reading a body of unannounced length.
 */
export async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  checkDeclaredLength(request, limit)
  const tooLarge = () => new RequestTooLargeError(`The request body is larger than ${Math.round(limit / MiB)} MiB.`)
  if (!request.body) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge()
    chunks.push(chunk)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}
