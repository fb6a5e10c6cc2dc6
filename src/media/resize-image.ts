import { Jimp } from 'jimp'
import { InvalidRequestError } from '../errors/kinds'
import { checkImageHeader, MAX_IMAGE_PIXELS } from './image-header'

/** jpeg-js's own bounds, a second line behind the header check (its defaults are 100 MP and 512 MB). */
const JPEG_LIMITS = { maxResolutionInMP: Math.ceil(MAX_IMAGE_PIXELS / 1e6), maxMemoryUsageInMB: 256 }

/**
 * Decodes run one at a time: each may hold a couple of hundred megabytes while it works (see
 * image-header.ts), and ten at once would hold ten times that.
 */
let decoding: Promise<unknown> = Promise.resolve()

/**
 * An image scaled and centre-cropped to exactly `width` x `height`, as PNG. jimp is pure
 * JavaScript, so it works the same inside the compiled binary. The file's header is checked
 * first: nothing larger than image-header.ts allows is ever decoded.
 */
export async function coverImage(data: Uint8Array, width: number, height: number, param: string): Promise<Uint8Array<ArrayBuffer>> {
  checkImageHeader(data, param)
  const turn = decoding.then(() => decodeAndCover(data, width, height, param))
  decoding = turn.catch(() => {})
  return turn
}

async function decodeAndCover(data: Uint8Array, width: number, height: number, param: string): Promise<Uint8Array<ArrayBuffer>> {
  let image: Awaited<ReturnType<typeof Jimp.read>>
  try {
    image = await Jimp.read(Buffer.from(data), { 'image/jpeg': JPEG_LIMITS })
  } catch {
    throw new InvalidRequestError(`${param} could not be read as an image (PNG, JPEG, GIF or BMP).`, { param })
  }
  image.cover({ w: width, h: height })
  return new Uint8Array(await image.getBuffer('image/png'))
}
