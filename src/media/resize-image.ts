import { Jimp } from 'jimp'
import { InvalidRequestError } from '../errors/kinds'

/**
 * An image scaled and centre-cropped to exactly `width` x `height`, as PNG. jimp is pure
 * JavaScript, so it works the same inside the compiled binary.
 */
export async function coverImage(data: Uint8Array, width: number, height: number, param: string): Promise<Uint8Array<ArrayBuffer>> {
  let image: Awaited<ReturnType<typeof Jimp.read>>
  try {
    image = await Jimp.read(Buffer.from(data))
  } catch {
    throw new InvalidRequestError(`${param} could not be read as an image (PNG, JPEG, GIF, BMP or TIFF).`, { param })
  }
  image.cover({ w: width, h: height })
  return new Uint8Array(await image.getBuffer('image/png'))
}
