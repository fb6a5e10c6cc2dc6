import { InvalidRequestError } from '../errors/kinds'

/**
 * Image dimensions read from the first bytes of a file, before anything is decoded. A decoder
 * allocates width x height x 4 bytes (more while it works) whatever the file's own size, so a
 * 140 KB PNG that declares 12000 x 12000 took the gateway from 81 MB to 1.2 GB. Reading the
 * header costs nothing and lets the caller refuse such a file first.
 */
export interface ImageHeader {
  format: 'png' | 'jpeg' | 'gif' | 'webp' | 'bmp'
  width: number
  height: number
  /** GIF only: how many frames the file holds. */
  frames?: number
}

/**
 * What the gateway agrees to decode. The reference image of a family B video is scaled down to
 * the output, at most 1280 x 720 (0.9 megapixels); 2048 x 2048 (4.2 megapixels) is four and a
 * half times that, a QHD frame (2560 x 1440) fits, and a side may reach 4096 for panoramas.
 * Decoding in pure JavaScript is dear: measured with jimp, a 4 megapixel JPEG peaks at about
 * 200 MB and a 12 megapixel photo at 450 MB, so larger images must be scaled by the client.
 */
export const MAX_IMAGE_SIDE = 4096
export const MAX_IMAGE_PIXELS = 2048 * 2048
/** An animated GIF's reference frame is its first; thousands of frames only cost parsing. */
export const MAX_GIF_FRAMES = 256

const FORMATS = 'PNG, JPEG, GIF, BMP or WebP'

/** The header of `bytes` if it is a still image format whose size can be read, else undefined. */
export function readImageHeader(bytes: Uint8Array): ImageHeader | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  try {
    if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return pngHeader(bytes, view)
    if (startsWith(bytes, [0xff, 0xd8])) return jpegHeader(bytes, view)
    if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return gifHeader(bytes, view)
    if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes.subarray(8), ascii('WEBP'))) return webpHeader(bytes, view)
    if (startsWith(bytes, ascii('BM'))) return bmpHeader(view)
  } catch (error) {
    // A header cut short reads past the end of the view: not an image that can be used.
    if (error instanceof RangeError) return undefined
    throw error
  }
  return undefined
}

/**
 * The header of an image the gateway is about to decode, or 400 invalid_request naming `param`
 * when it is not a readable image or is larger than MAX_IMAGE_SIDE / MAX_IMAGE_PIXELS.
 */
export function checkImageHeader(bytes: Uint8Array, param: string): ImageHeader {
  const header = readImageHeader(bytes)
  if (!header || header.width < 1 || header.height < 1) throw new InvalidRequestError(`${param} could not be read as an image (${FORMATS}).`, { param })
  if (header.width > MAX_IMAGE_SIDE || header.height > MAX_IMAGE_SIDE || header.width * header.height > MAX_IMAGE_PIXELS) {
    throw new InvalidRequestError(
      `${param} is ${header.width}x${header.height}; images may be at most ${MAX_IMAGE_SIDE} pixels a side and ${MAX_IMAGE_PIXELS / 1024 / 1024} megapixels (2048x2048). Scale it down first.`,
      { param },
    )
  }
  if (header.frames !== undefined && header.frames > MAX_GIF_FRAMES) {
    throw new InvalidRequestError(`${param} has more than ${MAX_GIF_FRAMES} frames; send a still image.`, { param })
  }
  return header
}

function ascii(text: string): number[] {
  return [...text].map((character) => character.charCodeAt(0))
}

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((byte, index) => bytes[index] === byte)
}

/** The signature, then the IHDR chunk, which the PNG specification requires first. */
function pngHeader(bytes: Uint8Array, view: DataView): ImageHeader | undefined {
  if (!startsWith(bytes.subarray(12), ascii('IHDR'))) return undefined
  return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) }
}

/**
 * The segments up to the first start-of-frame (SOF0 to SOF15 but DHT, JPG and DAC), which holds
 * the frame's height and width. A scan before any frame header is not a usable file.
 */
function jpegHeader(bytes: Uint8Array, view: DataView): ImageHeader | undefined {
  let offset = 2
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) return undefined
    const marker = view.getUint8(offset + 1)
    // Fill bytes before a marker.
    if (marker === 0xff) {
      offset++
      continue
    }
    // Markers that stand alone: TEM, RST0 to RST7.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2
      continue
    }
    if (marker === 0xd9 || marker === 0xda) return undefined
    const length = view.getUint16(offset + 2)
    if (length < 2) return undefined
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (isFrame) return { format: 'jpeg', height: view.getUint16(offset + 5), width: view.getUint16(offset + 7) }
    offset += 2 + length
  }
  return undefined
}

/**
 * The logical screen, and every frame walked to count them and to find the largest: a decoder
 * allocates the screen and the first frame's pixels, and a frame may claim more than the screen.
 */
function gifHeader(bytes: Uint8Array, view: DataView): ImageHeader | undefined {
  let width = view.getUint16(6, true)
  let height = view.getUint16(8, true)
  const screenFlags = view.getUint8(10)
  let offset = 13 + (screenFlags & 0x80 ? 3 * 2 ** ((screenFlags & 0x07) + 1) : 0)
  let frames = 0
  const skipSubBlocks = () => {
    while (true) {
      const size = view.getUint8(offset)
      offset += 1 + size
      if (size === 0) return
    }
  }
  while (offset < bytes.length) {
    const introducer = view.getUint8(offset)
    if (introducer === 0x3b) break
    if (introducer === 0x21) {
      offset += 2
      skipSubBlocks()
    } else if (introducer === 0x2c) {
      // Counting stops past the limit: the file is refused whatever the rest holds.
      if (++frames > MAX_GIF_FRAMES) break
      width = Math.max(width, view.getUint16(offset + 5, true))
      height = Math.max(height, view.getUint16(offset + 7, true))
      const flags = view.getUint8(offset + 9)
      offset += 10 + (flags & 0x80 ? 3 * 2 ** ((flags & 0x07) + 1) : 0)
      // The LZW minimum code size, then the image data.
      offset += 1
      skipSubBlocks()
    } else {
      return undefined
    }
  }
  return frames === 0 ? undefined : { format: 'gif', width, height, frames }
}

/** The first chunk: lossy VP8, lossless VP8L, or the extended VP8X with its canvas size. */
function webpHeader(bytes: Uint8Array, view: DataView): ImageHeader | undefined {
  const chunk = String.fromCharCode(...bytes.subarray(12, 16))
  if (chunk === 'VP8 ') {
    // A 3-byte frame tag, the start code 9d 01 2a, then 14-bit width and height.
    if (!startsWith(bytes.subarray(23), [0x9d, 0x01, 0x2a])) return undefined
    return { format: 'webp', width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff }
  }
  if (chunk === 'VP8L') {
    // The signature 0x2f, then width - 1 and height - 1 in 14 bits each, least significant first.
    if (bytes[20] !== 0x2f) return undefined
    const bits = view.getUint32(21, true)
    return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
  }
  if (chunk === 'VP8X') {
    const width = 1 + (view.getUint16(24, true) | (view.getUint8(26) << 16))
    const height = 1 + (view.getUint16(27, true) | (view.getUint8(29) << 16))
    return { format: 'webp', width, height }
  }
  return undefined
}

/** BITMAPCOREHEADER (12 bytes, 16-bit sizes) or the later headers (32-bit, height negative when top-down). */
function bmpHeader(view: DataView): ImageHeader {
  if (view.getUint32(14, true) === 12) return { format: 'bmp', width: view.getUint16(18, true), height: view.getUint16(20, true) }
  return { format: 'bmp', width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) }
}
