import {
  type AudioReading,
  ascii,
  type ByteWindow,
  FALLBACK_BYTES_PER_SECOND,
  MAX_HOLD_SECONDS,
  MAX_READ,
  plausibleSeconds,
  uint16LittleEndian,
  uint32LittleEndian,
} from './reading'

/**
 * Ogg (RFC 3533) with Opus (RFC 7845) or Vorbis. The claim is the last page's granule
 * position: samples at 48 kHz less the pre-skip for Opus, samples at the stream's rate for
 * Vorbis. For Opus the packets are also counted: each packet's first byte (its TOC, RFC 6716
 * §3.1) says how much audio it decodes to, so walking the pages sums what a decoder will play
 * whatever the granule positions claim. Vorbis packet lengths depend on the codebook setup,
 * so Vorbis is bounded by its bitrate instead.
 */

/** The largest page: 27-byte header, 255 lacing values, 255 segments of 255 bytes. */
const MAX_PAGE_BYTES = 27 + 255 + 255 * 255
/** More pages than a 25 MiB file can hold (a page has at least 27 bytes). */
const MAX_PAGES = 1 << 20
/** Opus's longest packet: 120 ms at 48 kHz. */
const MAX_OPUS_PACKET_SAMPLES = 5760
/** Opus (510 kbit/s at most) and Vorbis (about 500 kbit/s at its top quality, stereo): 512 kbit/s. */
const MAX_BYTES_PER_SECOND = 512_000 / 8

interface PageHeader {
  continued: boolean
  serial: number
  /** Offsets from the page's start. */
  bodyStart: number
  end: number
}

/** "OggS" at `at`, compared byte by byte: the walk tests it on every page. */
function captureAt(bytes: Uint8Array, at: number): boolean {
  return bytes[at] === 0x4f && bytes[at + 1] === 0x67 && bytes[at + 2] === 0x67 && bytes[at + 3] === 0x53 && bytes[at + 4] === 0
}

/** The page header at `at` in `bytes`, if the whole page lies within them. */
function pageAt(bytes: Uint8Array, at: number): PageHeader | undefined {
  if (at + 27 > bytes.length || !captureAt(bytes, at)) return undefined
  const segments = bytes[at + 26] ?? 0
  const bodyStart = 27 + segments
  if (at + bodyStart > bytes.length) return undefined
  let end = bodyStart
  for (let index = at + 27; index < at + bodyStart; index++) end += bytes[index] ?? 0
  if (at + end > bytes.length) return undefined
  return { continued: ((bytes[at + 5] ?? 0) & 1) === 1, serial: uint32LittleEndian(bytes, at + 14), bodyStart, end }
}

/** The granule position at `at`, or undefined for -1 ("no packet ends on this page"). */
function granuleAt(bytes: Uint8Array, at: number): number | undefined {
  const low = uint32LittleEndian(bytes, at + 6)
  const high = uint32LittleEndian(bytes, at + 10)
  return low === 0xffffffff && high === 0xffffffff ? undefined : high * 0x100000000 + low
}

/** The granule position of the stream's last page that has one, from the file's tail. */
async function lastGranule(window: ByteWindow, serial: number): Promise<number | undefined> {
  const tailStart = Math.max(0, window.size - MAX_PAGE_BYTES)
  const tail = await window.read(tailStart, MAX_READ)
  for (let at = tail.length - 27; at >= 0; at--) {
    if (!captureAt(tail, at) || uint32LittleEndian(tail, at + 14) !== serial) continue
    const granule = granuleAt(tail, at)
    if (granule !== undefined) return granule
  }
  return undefined
}

const SILK_SAMPLES = [480, 960, 1920, 2880]
const HYBRID_SAMPLES = [480, 960]
const CELT_SAMPLES = [120, 240, 480, 960]

/** Samples at 48 kHz of one frame, by TOC configuration (RFC 6716 §3.1, Table 2). */
const OPUS_FRAME_SAMPLES = Array.from({ length: 32 }, (_, config) =>
  // SILK-only (0-11): 10, 20, 40, 60 ms; hybrid (12-15): 10, 20 ms; CELT-only (16-31): 2.5, 5, 10, 20 ms.
  // The masks keep every index inside its list.
  config < 12 ? (SILK_SAMPLES[config & 3] ?? 0) : config < 16 ? (HYBRID_SAMPLES[config & 1] ?? 0) : (CELT_SAMPLES[config & 3] ?? 0),
)

/** Samples at 48 kHz an Opus packet decodes to, from its TOC byte and frame count. */
function opusPacketSamples(bytes: Uint8Array, at: number, firstSegmentLength: number): number {
  // An empty or malformed packet makes a decoder conceal a frame of loss: count the most.
  if (firstSegmentLength === 0) return MAX_OPUS_PACKET_SAMPLES
  const toc = bytes[at] ?? 0
  const code = toc & 3
  const frames = code === 0 ? 1 : code < 3 ? 2 : firstSegmentLength >= 2 ? (bytes[at + 1] ?? 0) & 0x3f : 0
  const samples = frames * (OPUS_FRAME_SAMPLES[toc >> 3] ?? 0)
  return frames === 0 || samples > MAX_OPUS_PACKET_SAMPLES ? MAX_OPUS_PACKET_SAMPLES : samples
}

/**
 * Seconds the stream's Opus packets decode to, less the pre-skip. Pages of other streams and
 * bytes that are no page at all (junk, a truncated last page, anything past the page cap) are
 * counted at the fallback rate. The walk stops once the count passes the longest hold: a
 * crafted file of empty packets cannot keep it busy for more than that.
 */
async function countOpus(window: ByteWindow, serial: number, preSkip: number): Promise<number> {
  const enough = MAX_HOLD_SECONDS * 48000 + preSkip
  let position = 0
  let pages = 0
  let packets = 0
  let samples = 0
  let unaccounted = 0
  while (position < window.size && pages < MAX_PAGES && samples < enough) {
    // A read is larger than any page, so a page that does not fit in a fresh read is cut short.
    const chunk = await window.read(position, MAX_READ)
    let offset = 0
    for (let page = pageAt(chunk, offset); page && pages < MAX_PAGES && samples < enough; page = pageAt(chunk, offset)) {
      pages++
      if (page.serial !== serial) {
        unaccounted += page.end
      } else {
        let cursor = offset + page.bodyStart
        let startsPacket = !page.continued
        for (let index = offset + 27; index < offset + page.bodyStart; index++) {
          const length = chunk[index] ?? 0
          // The first two packets are the OpusHead and OpusTags headers: no audio.
          if (startsPacket && packets++ >= 2) samples += opusPacketSamples(chunk, cursor, length)
          cursor += length
          startsPacket = length < 255 // a segment of 255 bytes continues its packet
        }
      }
      offset += page.end
    }
    if (offset === 0) break
    position += offset
  }
  unaccounted += window.size - position
  return Math.max(0, samples - preSkip) / 48000 + unaccounted / FALLBACK_BYTES_PER_SECOND
}

export async function readOgg(window: ByteWindow): Promise<AudioReading> {
  const firstPage = await window.read(0, MAX_PAGE_BYTES)
  const page = pageAt(firstPage, 0)
  if (!page) return { container: 'ogg' }
  const packet = firstPage.subarray(page.bodyStart, page.end)
  if (ascii(packet, 0, 8) === 'OpusHead') {
    const preSkip = uint16LittleEndian(packet, 10)
    const granule = await lastGranule(window, page.serial)
    return {
      container: 'ogg',
      codec: 'opus',
      claimedSeconds: granule === undefined ? undefined : plausibleSeconds((granule - preSkip) / 48000),
      countedSeconds: await countOpus(window, page.serial, preSkip),
      maxBytesPerSecond: MAX_BYTES_PER_SECOND,
    }
  }
  if (packet[0] === 1 && ascii(packet, 1, 6) === 'vorbis') {
    const sampleRate = uint32LittleEndian(packet, 12)
    const granule = await lastGranule(window, page.serial)
    return {
      container: 'ogg',
      codec: 'vorbis',
      claimedSeconds: granule === undefined || sampleRate === 0 ? undefined : plausibleSeconds(granule / sampleRate),
      maxBytesPerSecond: MAX_BYTES_PER_SECOND,
    }
  }
  // Speex, FLAC in Ogg, ...: no duration read; the fallback rate applies.
  return { container: 'ogg' }
}
