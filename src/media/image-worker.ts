/**
 * The image thread's entry (a Bun Worker started by image-thread.ts): decodes, scales and crops
 * with jimp, which is pure JavaScript and takes about a second of CPU for a 2048 x 2048 image,
 * here instead of on the event loop every request shares. It is its own entry point in the
 * compiled binary (`bun run build`).
 */
import { Jimp } from 'jimp'
import { type CoverResult, isCoverJob } from './cover-job'
import { MAX_IMAGE_PIXELS } from './image-header'

declare var self: Worker

/** jpeg-js's own bounds, a second line behind the header check (its defaults are 100 MP and 512 MB). */
const JPEG_LIMITS = { maxResolutionInMP: Math.ceil(MAX_IMAGE_PIXELS / 1e6), maxMemoryUsageInMB: 256 }

self.onmessage = async (event: MessageEvent) => {
  const job: unknown = event.data
  if (!isCoverJob(job)) return
  const result = await cover(job.id, job.data, job.width, job.height)
  if (result.ok) self.postMessage(result, [result.png.buffer])
  else self.postMessage(result)
  // The decoded pixels (up to 64 MB for 2048 x 2048) are garbage now: give the memory back
  // before the next job rather than whenever the collector gets to it.
  Bun.gc(true)
}

async function cover(id: number, data: Uint8Array, width: number, height: number): Promise<CoverResult> {
  let image: Awaited<ReturnType<typeof Jimp.read>>
  try {
    image = await Jimp.read(Buffer.from(data.buffer, data.byteOffset, data.byteLength), { 'image/jpeg': JPEG_LIMITS })
  } catch (error) {
    return { id, ok: false, unreadable: true, message: error instanceof Error ? error.message : String(error) }
  }
  try {
    image.cover({ w: width, h: height })
    return { id, ok: true, png: new Uint8Array(await image.getBuffer('image/png')) }
  } catch (error) {
    return { id, ok: false, unreadable: false, message: error instanceof Error ? error.message : String(error) }
  }
}
