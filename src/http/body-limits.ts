import { RequestTooLargeError } from '../errors/kinds'

const MiB = 1024 * 1024

/** Per-path limits on JSON bodies (API.md §8 for videos; 32 MB is Anthropic's own for messages). */
const LIMITS: Record<string, number> = { '/v1/videos/generations': 10 * MiB }
const DEFAULT_LIMIT = 32 * MiB

export function bodyLimitFor(pathname: string): number {
  return LIMITS[pathname] ?? DEFAULT_LIMIT
}

/**
 * The body's bytes, refused with 413 as soon as it is known to be too large: from
 * Content-Length before anything is read, or while reading a body of unannounced length.
 */
export async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () => new RequestTooLargeError(`The request body is larger than ${Math.round(limit / MiB)} MiB.`)
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > limit) throw tooLarge()
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
