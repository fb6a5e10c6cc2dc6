import { describe, expect, test } from 'bun:test'
import { deflateSync } from 'node:zlib'
import { Jimp } from 'jimp'
import { InvalidRequestError, ServiceUnavailableError } from '../../src/errors/kinds'
import { DecodeSlots } from '../../src/media/decode-slots'
import { coverImage, imageDecodes, imageThread } from '../../src/media/resize-image'

function chunk(type: string, data: Uint8Array): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const out = Buffer.alloc(8 + data.length + 4)
  out.writeUInt32BE(data.length, 0)
  typed.copy(out, 4)
  out.writeUInt32BE(Bun.hash.crc32(typed), 8 + data.length)
  return out
}

/** An RGB PNG of `width` x `height` whose pixel data is `rows` (a filter byte, then RGB, per row). */
function png(width: number, height: number, rows: Uint8Array): Uint8Array {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows, { level: 1 })),
    chunk('IEND', new Uint8Array()),
  ])
}

/** A noisy gradient: a decoder has to do all of its work on it. */
function noisyPng(width: number, height: number): Uint8Array {
  const stride = width * 3 + 1
  const rows = Buffer.alloc(stride * height)
  let seed = 7
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0
      rows.set([(x + (seed & 15)) & 255, (y + ((seed >> 4) & 15)) & 255, ((x ^ y) + ((seed >> 8) & 15)) & 255], y * stride + 1 + x * 3)
    }
  }
  return png(width, height, rows)
}

/** Left half red, right half blue. */
function halvesPng(width: number, height: number): Uint8Array {
  const stride = width * 3 + 1
  const rows = Buffer.alloc(stride * height)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) rows.set(x < width / 2 ? [255, 0, 0] : [0, 0, 255], y * stride + 1 + x * 3)
  return png(width, height, rows)
}

describe('reference image decodes', () => {
  test('a 1024x1024 image is decoded on the image thread: the event loop keeps turning meanwhile', async () => {
    const image = noisyPng(1024, 1024)
    let last = performance.now()
    let longestStall = 0
    const ticker = setInterval(() => {
      const now = performance.now()
      longestStall = Math.max(longestStall, now - last)
      last = now
    }, 5)
    const started = performance.now()
    const fitted = await coverImage(image, 640, 360, 'image')
    const took = performance.now() - started
    clearInterval(ticker)
    longestStall = Math.max(longestStall, performance.now() - last)
    const decoded = await Jimp.read(Buffer.from(fitted))
    expect([decoded.width, decoded.height]).toEqual([640, 360])
    // Decoded on the event loop, the loop stalls for (nearly) the whole decode; on the thread
    // it turns every few milliseconds. Half the decode's own time is a generous bound either way.
    expect(longestStall).toBeLessThan(took / 2)
    expect(imageThread.started).toBe(1)
  }, 30_000)

  test('the image is scaled to cover the size and cropped about its centre', async () => {
    const fitted = await Jimp.read(Buffer.from(await coverImage(halvesPng(200, 100), 100, 100, 'image')))
    expect([fitted.width, fitted.height]).toEqual([100, 100])
    // The middle 100 columns of 200: 50 red, then 50 blue.
    expect(fitted.getPixelColor(10, 50)).toBe(0xff0000ff)
    expect(fitted.getPixelColor(90, 50)).toBe(0x0000ffff)
  })

  test('a file with a valid header that does not decode is 400 naming the field, and the thread lives on', async () => {
    const broken = Buffer.concat([
      Buffer.from(png(10, 10, Buffer.alloc(31 * 10))).subarray(0, 33),
      chunk('IDAT', Buffer.from('not zlib at all')),
      chunk('IEND', new Uint8Array()),
    ])
    const error = await coverImage(broken, 64, 64, 'image').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidRequestError)
    expect(error).toMatchObject({ param: 'image' })
    const fitted = await Jimp.read(Buffer.from(await coverImage(halvesPng(20, 10), 8, 8, 'image')))
    expect([fitted.width, fitted.height]).toEqual([8, 8])
  })

  test('at most one decode runs and eight wait; more at once are 503 with Retry-After at once', async () => {
    const image = halvesPng(64, 64)
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () =>
        coverImage(image, 32, 32, 'image').then(
          () => 'done',
          (error: unknown) => error,
        ),
      ),
    )
    expect(outcomes.filter((outcome) => outcome === 'done')).toHaveLength(1 + imageDecodes.maxWaiting)
    const refused = outcomes.filter((outcome) => outcome instanceof ServiceUnavailableError)
    expect(refused).toHaveLength(12 - 1 - imageDecodes.maxWaiting)
    expect(refused[0]).toMatchObject({ status: 503, code: 'service_unavailable' })
    expect(imageDecodes.load).toEqual({ running: 0, waiting: 0 })
  })
})

describe('decode slots', () => {
  test('never more than the limit at once; waiters go in order; a full queue or a long wait is 503', async () => {
    const slots = new DecodeSlots(2, 2, 100)
    let running = 0
    let most = 0
    const order: number[] = []
    const releases: (() => void)[] = []
    const work = (index: number) => () =>
      new Promise<number>((resolve) => {
        running++
        most = Math.max(most, running)
        order.push(index)
        releases.push(() => {
          running--
          resolve(index)
        })
      })
    const first = [0, 1, 2, 3].map((index) => slots.run(work(index)))
    await expect(slots.run(work(4))).rejects.toBeInstanceOf(ServiceUnavailableError)
    expect(slots.load).toEqual({ running: 2, waiting: 2 })
    releases.shift()?.()
    releases.shift()?.()
    await Bun.sleep(0)
    releases.shift()?.()
    releases.shift()?.()
    expect(await Promise.all(first)).toEqual([0, 1, 2, 3])
    expect(order).toEqual([0, 1, 2, 3])
    expect(most).toBe(2)
    expect(slots.load).toEqual({ running: 0, waiting: 0 })

    // Both slots busy past the wait: the waiter gives up with 503, and leaves the queue.
    const busy = [5, 6].map((index) => slots.run(work(index)))
    const error = await slots.run(work(7)).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ServiceUnavailableError)
    expect(error).toMatchObject({ headers: { 'retry-after': '5' } })
    expect(slots.load).toEqual({ running: 2, waiting: 0 })
    releases.splice(0).forEach((release) => release())
    await Promise.all(busy)
    expect(slots.load).toEqual({ running: 0, waiting: 0 })
  })
})
