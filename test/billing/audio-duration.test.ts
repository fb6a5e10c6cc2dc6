import { describe, expect, test } from 'bun:test'
import { FALLBACK_BYTES_PER_SECOND, MAX_HOLD_SECONDS, readAudioDuration, transcriptionHoldSeconds } from '../../src/billing/audio-duration'

/**
 * Durations read from real files of each container (test/fixtures/audio, made with ffmpeg:
 * see the README there), and what a transcription's hold makes of files that lie, are cut
 * short, are not audio at all, or are built to make a parser hang or allocate.
 */

const FIXTURES = `${import.meta.dir}/../fixtures/audio`
const fixture = (name: string) => Bun.file(`${FIXTURES}/${name}`).bytes()
const blob = (bytes: Uint8Array<ArrayBuffer>) => new Blob([bytes])

/**
 * `tone`: the seconds of audio ffmpeg encoded. `read`: what the container says, as ffprobe
 * reports it (MP3 and AAC add encoder delay and padding to the tone).
 */
const FILES = [
  { name: 'mp3-cbr.mp3', container: 'mp3', tone: 5, read: 5.076 },
  { name: 'mp3-vbr-xing.mp3', container: 'mp3', tone: 6.2, read: 6.408 },
  { name: 'aac.m4a', container: 'mp4', tone: 3.7, read: 3.764 },
  { name: 'opus.ogg', container: 'ogg', codec: 'opus', tone: 9.5, read: 9.5 },
  { name: 'vorbis.ogg', container: 'ogg', codec: 'vorbis', tone: 4.3, read: 4.3 },
  { name: 'pcm16.wav', container: 'wav', codec: 'pcm', tone: 0.6, read: 0.6 },
  { name: 'pcm24-extensible.wav', container: 'wav', codec: 'pcm', tone: 0.4, read: 0.4 },
  { name: 'flac.flac', container: 'flac', codec: 'flac', tone: 0.8, read: 0.8 },
  { name: 'opus.webm', container: 'webm', tone: 7.1, read: 7.108 },
] as const

/** The offset of an ASCII marker in `bytes`, from the start or (with `last`) from the end. */
function find(bytes: Uint8Array, marker: string, last = false): number {
  const index = last ? Buffer.from(bytes).lastIndexOf(marker, bytes.length, 'latin1') : Buffer.from(bytes).indexOf(marker, 0, 'latin1')
  if (index < 0) throw new Error(`no ${marker}`)
  return index
}

function view(bytes: Uint8Array) {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

describe('audio durations from container headers', () => {
  for (const file of FILES) {
    test(`${file.name}: ${file.read} s`, async () => {
      const bytes = await fixture(file.name)
      const reading = await readAudioDuration(blob(bytes))
      expect(reading).toMatchObject({ container: file.container, ...('codec' in file ? { codec: file.codec } : {}) })
      // The header's claim where the container has one, else the count (wav).
      const read = reading!.claimedSeconds ?? reading!.countedSeconds!
      expect(Math.abs(read - file.read)).toBeLessThan(0.005)
      if (reading!.countedSeconds !== undefined) expect(Math.abs(reading!.countedSeconds - file.read)).toBeLessThan(0.1)
      // The hold covers the audio and not much more: at most one MP3 frame or Opus packet, or the WAV header.
      const hold = await transcriptionHoldSeconds(blob(bytes))
      expect(hold).toBeGreaterThanOrEqual(file.tone)
      expect(hold - file.read).toBeLessThan(0.1)
    })
  }

  test('VBRI (Fraunhofer) headers are read like Xing', async () => {
    const bytes = await fixture('mp3-cbr.mp3')
    const frame = bytes.indexOf(0xff, find(bytes, 'Lavf'))
    // Tag, version, delay, quality, bytes, then the frame count: 200 frames of 576 samples at 16 kHz.
    bytes.set(Buffer.from('VBRI', 'latin1'), frame + 36)
    view(bytes).setUint32(frame + 36 + 14, 200)
    expect((await readAudioDuration(blob(bytes)))!.claimedSeconds).toBeCloseTo((200 * 576) / 16000, 6)
  })

  test('unknown bytes: no reading, the hold at the fallback rate', async () => {
    const bytes = new TextEncoder().encode('this is not audio at all, just some text that came as a file '.repeat(100))
    expect(await readAudioDuration(blob(bytes))).toBeUndefined()
    expect(await transcriptionHoldSeconds(blob(bytes))).toBe(bytes.length / FALLBACK_BYTES_PER_SECOND)
    expect(await transcriptionHoldSeconds(blob(new Uint8Array()))).toBe(0)
  })

  test('a streaming WebM without Duration falls back to the rate', async () => {
    const bytes = await fixture('opus.webm')
    const duration = bytes.findIndex((byte, index) => byte === 0x44 && bytes[index + 1] === 0x89 && bytes[index + 2] === 0x88)
    // The Duration element (ID, size, 8-byte float) becomes a Void element of the same length.
    bytes.set([0xec, 0x89], duration)
    const reading = await readAudioDuration(blob(bytes))
    expect(reading).toMatchObject({ container: 'webm' })
    expect(reading!.claimedSeconds).toBeUndefined()
    expect(await transcriptionHoldSeconds(blob(bytes))).toBe(bytes.length / FALLBACK_BYTES_PER_SECOND)
  })

  test('truncated files: no throw, a finite hold, still covering what they hold', async () => {
    for (const file of FILES) {
      const bytes = await fixture(file.name)
      for (const length of [0, 3, 11, 20, 44, 100, Math.floor(bytes.length / 2), bytes.length - 1]) {
        const cut = bytes.subarray(0, length)
        const hold = await transcriptionHoldSeconds(blob(cut))
        expect(Number.isFinite(hold) && hold >= 0 && hold <= MAX_HOLD_SECONDS).toBe(true)
        // Cut at half or later, a file still holds about its share of the tone.
        if (length >= bytes.length / 2) expect(hold).toBeGreaterThanOrEqual(file.tone * (length / bytes.length) * 0.9)
      }
    }
  })

  test('a WAV whose data size lies is held for the bytes it has', async () => {
    const honest = await fixture('pcm16.wav')
    const expected = await transcriptionHoldSeconds(blob(honest))
    for (const declared of [100, 0, 0xffffffff]) {
      const bytes = honest.slice()
      view(bytes).setUint32(find(bytes, 'data') + 4, declared, true)
      expect(await transcriptionHoldSeconds(blob(bytes))).toBe(expected)
    }
    // A byte rate field claiming far more than the samples take changes nothing either.
    const bytes = honest.slice()
    view(bytes).setUint32(find(bytes, 'fmt ') + 8 + 8, 10_000_000, true)
    expect(await transcriptionHoldSeconds(blob(bytes))).toBe(expected)
  })

  test('headers claiming too little: the count or the bitrate bound wins', async () => {
    // Opus: the last page's granule position says 10 ms; the packets say 9.5 s.
    const opus = await fixture('opus.ogg')
    view(opus).setUint32(find(opus, 'OggS', true) + 6, 312 + 480, true)
    const opusReading = await readAudioDuration(blob(opus))
    expect(opusReading!.claimedSeconds).toBeCloseTo(0.01, 6)
    expect(await transcriptionHoldSeconds(blob(opus))).toBeGreaterThanOrEqual(9.5)

    // MP3: a Xing header claiming 1 frame; the frames counted are what counts.
    const mp3 = await fixture('mp3-vbr-xing.mp3')
    view(mp3).setUint32(find(mp3, 'Xing') + 8, 1)
    expect(await transcriptionHoldSeconds(blob(mp3))).toBeGreaterThanOrEqual(6.2)

    // MP3 without Xing: a first frame at 320 kbit/s makes the size say 0.3 s; 5 s of 16 kbit/s frames follow it.
    const cbr = await fixture('mp3-cbr.mp3')
    const firstFrame = cbr.indexOf(0xff, find(cbr, 'Lavf'))
    const loud = new Uint8Array(960) // MPEG-1 layer III, 320 kbit/s, 48 kHz: 960 bytes, 24 ms
    loud.set([0xff, 0xfb, 0xe4, 0xc4])
    const disguised = new Uint8Array([...cbr.subarray(0, firstFrame), ...loud, ...cbr.subarray(firstFrame)])
    expect((await readAudioDuration(blob(disguised)))!.claimedSeconds).toBeLessThan(0.3)
    expect(await transcriptionHoldSeconds(blob(disguised))).toBeGreaterThanOrEqual(5)
    // And a stray byte half way stops the count: the rest is counted at the fallback rate.
    const broken = new Uint8Array([...cbr.subarray(0, cbr.length / 2), 0, ...cbr.subarray(cbr.length / 2)])
    expect(await transcriptionHoldSeconds(blob(broken))).toBeGreaterThanOrEqual(5)

    // MP4: a sound track of 1 ms. Nothing is counted, so the floor is the size at 512 kbit/s.
    const mp4 = await fixture('aac.m4a')
    for (const box of ['mvhd', 'mdhd']) view(mp4).setUint32(find(mp4, box) + 4 + 16, 1)
    expect(await transcriptionHoldSeconds(blob(mp4))).toBe(mp4.length / 64_000)

    // FLAC: one sample in all; the floor is the size at the raw PCM rate (8 kHz, 16-bit mono).
    const flac = await fixture('flac.flac')
    flac[8 + 13] = (flac[8 + 13] ?? 0) & 0xf0
    view(flac).setUint32(8 + 14, 1)
    expect(await transcriptionHoldSeconds(blob(flac))).toBe(flac.length / 16_000)
  })

  test('absurd durations are held at the cap, never NaN, Infinity or negative', async () => {
    const mp4 = await fixture('aac.m4a')
    // A timescale of 1 and 4e9 units: 136 years.
    view(mp4).setUint32(find(mp4, 'mdhd') + 4 + 12, 1)
    view(mp4).setUint32(find(mp4, 'mdhd') + 4 + 16, 0xfffffffe)
    expect(await transcriptionHoldSeconds(blob(mp4))).toBe(MAX_HOLD_SECONDS)

    const webm = await fixture('opus.webm')
    const duration = webm.findIndex((byte, index) => byte === 0x44 && webm[index + 1] === 0x89 && webm[index + 2] === 0x88) + 3
    for (const [value, expected] of [
      [1e12, MAX_HOLD_SECONDS],
      [Number.POSITIVE_INFINITY, webm.length / FALLBACK_BYTES_PER_SECOND],
      [Number.NaN, webm.length / FALLBACK_BYTES_PER_SECOND],
      [-5000, webm.length / FALLBACK_BYTES_PER_SECOND],
    ]) {
      view(webm).setFloat64(duration, value!)
      expect(await transcriptionHoldSeconds(blob(webm))).toBe(expected!)
    }

    // FLAC: 2^36 - 1 samples at 8 kHz.
    const flac = await fixture('flac.flac')
    flac[8 + 13] = (flac[8 + 13] ?? 0) | 0x0f
    view(flac).setUint32(8 + 14, 0xffffffff)
    expect(await transcriptionHoldSeconds(blob(flac))).toBe(MAX_HOLD_SECONDS)
  })
})

/** A Blob that records every range read from it. */
class WatchedBlob extends Blob {
  readonly reads: number[] = []
  override slice(start?: number, end?: number, contentType?: string): Blob {
    this.reads.push((end ?? this.size) - (start ?? 0))
    return super.slice(start, end, contentType)
  }
}

/** `pattern` again and again over `into`, by doubling: quick even for 25 MiB. */
function repeat<Bytes extends Uint8Array>(into: Bytes, pattern: ArrayLike<number>): Bytes {
  into.set(Array.from(pattern).slice(0, into.length))
  for (let filled = Math.min(pattern.length, into.length); filled < into.length; filled *= 2) into.copyWithin(filled, 0, filled)
  return into
}

describe('crafted files', () => {
  const MiB = 1024 * 1024

  /** Reads a crafted file, checking it was quick and read in small pieces. */
  async function holdFor(bytes: Uint8Array<ArrayBuffer>, budgetMilliseconds = 2000) {
    const watched = new WatchedBlob([bytes])
    const started = performance.now()
    const hold = await transcriptionHoldSeconds(watched)
    expect(performance.now() - started).toBeLessThan(budgetMilliseconds)
    expect(watched.reads.length).toBeGreaterThan(0)
    expect(Math.max(...watched.reads)).toBeLessThanOrEqual(128 * 1024)
    expect(Number.isFinite(hold) && hold >= 0 && hold <= MAX_HOLD_SECONDS).toBe(true)
    return { hold, reads: watched.reads }
  }

  test('an MP4 box claiming 2^64 bytes, or nested boxes without end', async () => {
    const huge = new Uint8Array(4096)
    huge.set([0, 0, 0, 1, ...Buffer.from('ftyp'), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
    const { hold, reads } = await holdFor(huge)
    expect(hold).toBe(huge.length / FALLBACK_BYTES_PER_SECOND)
    expect(reads.length).toBeLessThan(5)

    // A moov whose child claims 4 GiB, and a file of nothing but 8-byte boxes.
    const moov = new Uint8Array(4096)
    moov.set([0, 0, 0x10, 0, ...Buffer.from('moov'), 0xff, 0xff, 0xff, 0xff, ...Buffer.from('trak')])
    expect((await holdFor(moov)).hold).toBe(moov.length / FALLBACK_BYTES_PER_SECOND)
    const boxes = repeat(new Uint8Array(25 * MiB), [0, 0, 0, 8, ...Buffer.from('free')])
    expect((await holdFor(boxes)).hold).toBe(boxes.length / FALLBACK_BYTES_PER_SECOND)
  })

  test('EBML elements claiming 2^56 bytes or an unknown size', async () => {
    const header = new Uint8Array(4096)
    header.set([0x1a, 0x45, 0xdf, 0xa3, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe])
    expect((await holdFor(header)).hold).toBe(header.length / FALLBACK_BYTES_PER_SECOND)
    // An empty EBML header, a Segment of unknown size, an Info of 2^48 bytes.
    const info = new Uint8Array(4096)
    info.set([0x1a, 0x45, 0xdf, 0xa3, 0x80, 0x18, 0x53, 0x80, 0x67, 0xff, 0x15, 0x49, 0xa9, 0x66, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
    const { hold, reads } = await holdFor(info)
    expect(hold).toBe(info.length / FALLBACK_BYTES_PER_SECOND)
    expect(reads.length).toBeLessThan(5)
  })

  test('an ID3 tag claiming 256 MB, and an ID3 tag followed by 25 MiB of sync bytes', async () => {
    const tag = new Uint8Array(4096)
    tag.set([...Buffer.from('ID3'), 4, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f])
    expect((await holdFor(tag)).hold).toBe(tag.length / FALLBACK_BYTES_PER_SECOND)
    // Every byte a frame sync, none a valid frame: the search gives up after 64 KiB.
    const sync = new Uint8Array(25 * MiB).fill(0xff)
    sync.set([...Buffer.from('ID3'), 4, 0, 0, 0, 0, 0, 0])
    expect((await holdFor(sync)).hold).toBe(sync.length / FALLBACK_BYTES_PER_SECOND)
  })

  test('25 MiB of the smallest MP3 frames, or of Ogg pages of empty packets, is walked in bounded time', async () => {
    // MPEG-2.5 layer III, 8 kbit/s at 12 kHz: 48-byte frames of 48 ms, 546,133 of them.
    const frames = repeat(new Uint8Array(25 * MiB), [0xff, 0xe3, 0x14, 0xc0, ...new Array(44).fill(0)])
    // The last 16 bytes start a frame too: 546,134 frames.
    expect((await holdFor(frames)).hold).toBeCloseTo((Math.ceil(frames.length / 48) * 576) / 12000, 3)

    // An OpusHead page, then pages of 255 empty packets each: each counted as a 120 ms frame of
    // concealed loss, which passes the cap long before the end of the file.
    const opusHead = [...Buffer.from('OggS'), 0, ...new Array(21).fill(0), 1, 19, ...Buffer.from('OpusHead'), 1, 1, 0x38, 1, 0x80, 0xbb, 0, 0, 0, 0, 0]
    const emptyPackets = [...Buffer.from('OggS'), 0, ...new Array(21).fill(0), 255, ...new Array(255).fill(0)]
    const pages = new Uint8Array(25 * MiB)
    pages.set(opusHead)
    repeat(pages.subarray(opusHead.length), emptyPackets)
    expect((await holdFor(pages)).hold).toBe(MAX_HOLD_SECONDS)
  })
})
