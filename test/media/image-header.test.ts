import { describe, expect, test } from 'bun:test'
import { crc32 } from 'node:zlib'
import { Jimp } from 'jimp'
import { InvalidRequestError } from '../../src/errors/kinds'
import { checkImageHeader, MAX_GIF_FRAMES, readImageHeader } from '../../src/media/image-header'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

const ONE_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

function bytes(...parts: (number[] | string | Uint8Array)[]): Uint8Array {
  return new Uint8Array(parts.flatMap((part) => (typeof part === 'string' ? [...part].map((character) => character.charCodeAt(0)) : [...part])))
}
const u16be = (value: number) => [value >> 8, value & 0xff]
const u32be = (value: number) => [value >>> 24, (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff]
const u16le = (value: number) => [value & 0xff, value >> 8]
const u24le = (value: number) => [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff]
const u32le = (value: number) => [...u16le(value & 0xffff), ...u16le(value >>> 16)]

/** A PNG signature and an IHDR chunk with its CRC: all a decoder needs to allocate width x height. */
function pngDeclaring(width: number, height: number): Uint8Array {
  const chunk = bytes('IHDR', u32be(width), u32be(height), [8, 6, 0, 0, 0])
  return bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], u32be(13), chunk, u32be(crc32(chunk)), u32be(0), 'IEND', u32be(crc32(bytes('IEND'))))
}

/** SOI, a JFIF APP0 segment, then a baseline frame header. */
function jpegDeclaring(width: number, height: number): Uint8Array {
  return bytes(
    [0xff, 0xd8, 0xff, 0xe0],
    u16be(16),
    'JFIF',
    [0, 1, 1, 0, 0, 1, 0, 1, 0, 0],
    [0xff, 0xc0],
    u16be(17),
    [8],
    u16be(height),
    u16be(width),
    [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1],
  )
}

function webpDeclaring(width: number, height: number): Uint8Array {
  return bytes('RIFF', u32le(22), 'WEBP', 'VP8X', u32le(10), [0, 0, 0, 0], u24le(width - 1), u24le(height - 1))
}

function gifDeclaring(width: number, height: number, frames = 1): Uint8Array {
  const frame = bytes([0x21, 0xf9, 4, 0, 0, 0, 0, 0], [0x2c], u16le(0), u16le(0), u16le(width), u16le(height), [0], [2, 2, 0x4c, 0x01, 0])
  return bytes('GIF89a', u16le(width), u16le(height), [0x80, 0, 0], [0, 0, 0, 255, 255, 255], ...Array.from({ length: frames }, () => frame), [0x3b])
}

describe('image headers', () => {
  test('sizes are read from PNG, JPEG, WebP (VP8X, VP8L, VP8), GIF and BMP headers', async () => {
    expect(readImageHeader(pngDeclaring(12_000, 12_000))).toEqual({ format: 'png', width: 12_000, height: 12_000 })
    expect(readImageHeader(jpegDeclaring(12_000, 9_000))).toEqual({ format: 'jpeg', width: 12_000, height: 9_000 })
    expect(readImageHeader(webpDeclaring(16_383, 300))).toEqual({ format: 'webp', width: 16_383, height: 300 })
    const lossless = bytes('RIFF', u32le(13), 'WEBP', 'VP8L', u32le(5), [0x2f], u32le((639 | (479 << 14)) >>> 0))
    expect(readImageHeader(lossless)).toEqual({ format: 'webp', width: 640, height: 480 })
    const lossy = bytes('RIFF', u32le(20), 'WEBP', 'VP8 ', u32le(10), [0, 0, 0], [0x9d, 0x01, 0x2a], u16le(1920), u16le(1080))
    expect(readImageHeader(lossy)).toEqual({ format: 'webp', width: 1920, height: 1080 })
    expect(readImageHeader(gifDeclaring(640, 480, 3))).toEqual({ format: 'gif', width: 640, height: 480, frames: 3 })
    const bmp = bytes('BM', u32le(0), u32le(0), u32le(54), u32le(40), u32le(800), u32le(-600 >>> 0))
    expect(readImageHeader(bmp)).toEqual({ format: 'bmp', width: 800, height: 600 })
    expect(readImageHeader(Buffer.from(ONE_PIXEL_PNG, 'base64'))).toEqual({ format: 'png', width: 1, height: 1 })
    // A JPEG as an encoder writes it (JFIF, tables, then the frame).
    const photo = await new Jimp({ width: 300, height: 200, color: 0x336699ff }).getBuffer('image/jpeg')
    expect(readImageHeader(photo)).toEqual({ format: 'jpeg', width: 300, height: 200 })
  })

  test('huge, cut short, unknown or animated past the limit: 400 naming the field', () => {
    const refused = (data: Uint8Array) => {
      try {
        checkImageHeader(data, 'image')
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidRequestError)
        return { param: (error as InvalidRequestError).param, message: (error as InvalidRequestError).message }
      }
      throw new Error('accepted')
    }
    for (const data of [pngDeclaring(12_000, 12_000), jpegDeclaring(12_000, 12_000), webpDeclaring(12_000, 12_000), gifDeclaring(12_000, 12_000)]) {
      expect(refused(data)).toEqual({ param: 'image', message: expect.stringContaining('12000x12000') })
    }
    // Each side within 4096, but 16.7 megapixels.
    expect(refused(pngDeclaring(4096, 4096)).message).toContain('4096x4096')
    expect(refused(gifDeclaring(10, 10, MAX_GIF_FRAMES + 1)).message).toContain('frames')
    expect(refused(pngDeclaring(12_000, 12_000).subarray(0, 20)).message).toContain('could not be read')
    expect(refused(jpegDeclaring(100, 100).subarray(0, 22)).message).toContain('could not be read')
    expect(refused(bytes('II*\0')).message).toContain('could not be read')
    expect(checkImageHeader(pngDeclaring(2048, 2048), 'image')).toMatchObject({ width: 2048 })
    expect(checkImageHeader(pngDeclaring(4096, 1024), 'image')).toMatchObject({ width: 4096 })
  })
})

describe('a video reference image that declares 12000 x 12000', () => {
  const suite = gatewaySuite(testDatabases[0]!)

  test('is refused from its header, before it is decoded or anything is sent upstream', async () => {
    const { key } = await suite.harness.key()
    for (const bomb of [pngDeclaring(12_000, 12_000), jpegDeclaring(12_000, 12_000)]) {
      const reply = await suite.harness.call('POST', '/v1/videos/generations', {
        headers: bearer(key),
        body: { model: 'test/sora', prompt: 'a cat', image: `data:image/png;base64,${Buffer.from(bomb).toString('base64')}` },
      })
      expectError(reply, 400, 'invalid_request')
      expect(reply.json.error).toMatchObject({ param: 'image', message: expect.stringContaining('12000x12000') })
    }
    expect(suite.upstream.received).toHaveLength(0)
  })
})
