import { InvalidRequestError } from '../errors/kinds'
import { DecodeSlots } from './decode-slots'
import { checkImageHeader } from './image-header'
import { ImageThread, UnreadableImageError } from './image-thread'

/**
 * Decodes run one at a time, on a thread of their own (image-worker.ts): each takes about a
 * second of CPU and may hold a couple of hundred megabytes while it works (see image-header.ts).
 * Up to 8 more wait their turn, each at most 30 s; past that a request is 503 with Retry-After.
 */
export const imageDecodes = new DecodeSlots(1, 8, 30_000)

/** The largest image allowed decodes in about 1.2 s; one that takes this long has the thread replaced. */
const DECODE_DEADLINE_MS = 60_000

/**
 * The thread's entry: next to this file when running from source. In the compiled binary every
 * module's URL is the binary's, at the root of the bundle (the repository: `bun run build` sets
 * `--root .`), and the thread's entry, an entry point of its own, sits at its path there.
 */
const COMPILED = import.meta.url.startsWith('file:///$bunfs/')
const WORKER_ENTRY = COMPILED ? new URL('./src/media/image-worker.ts', import.meta.url) : new URL('./image-worker.ts', import.meta.url)

export const imageThread = new ImageThread(WORKER_ENTRY, DECODE_DEADLINE_MS)

/**
 * An image scaled and centre-cropped to exactly `width` x `height`, as PNG, made on the image
 * thread. The file's header is checked first: nothing larger than image-header.ts allows is
 * ever decoded.
 */
export async function coverImage(data: Uint8Array, width: number, height: number, param: string): Promise<Uint8Array<ArrayBuffer>> {
  checkImageHeader(data, param)
  try {
    return await imageDecodes.run(() => imageThread.cover(data, width, height))
  } catch (error) {
    if (error instanceof UnreadableImageError) throw new InvalidRequestError(`${param} could not be read as an image (PNG, JPEG, GIF or BMP).`, { param })
    throw error
  }
}
