import { type AudioReading, ascii, type ByteWindow, FALLBACK_BYTES_PER_SECOND, MAX_READ, plausibleSeconds, uint32BigEndian } from './reading'

/**
 * MPEG audio (mp3, and layers I and II): the duration a Xing/Info or VBRI header claims, else
 * the first frame's bitrate over the file's size (constant bitrate), and beside it the frames
 * counted one by one. Counting is what makes a lying header harmless: a decoder plays every
 * frame, whatever the first frame or the Xing header say. A frame header gives the frame's
 * length, so the walk reads 4 bytes a frame; a 25 MiB file has at most ~550,000 frames.
 */

/** Kilobits per second by bitrate index (1-14), per version and layer (ISO 11172-3, 13818-3). */
const BITRATES = {
  version1Layer1: [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  version1Layer2: [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  version1Layer3: [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  version2Layer1: [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  version2Layers2And3: [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
}

/** Sample rates by index (0-2) for MPEG-1, MPEG-2 and MPEG-2.5. */
const SAMPLE_RATES = { 1: [44100, 48000, 32000], 2: [22050, 24000, 16000], 25: [11025, 12000, 8000] }

/** More frames than a 25 MiB file can hold: a bound on the walk, not a limit files reach. */
const MAX_FRAMES = 1 << 20
/** How far past the ID3 tag the first frame is looked for. */
const SYNC_SEARCH_BYTES = 64 * 1024

interface FrameHeader {
  /** The whole frame, header included. */
  length: number
  samples: number
  sampleRate: number
  bitsPerSecond: number
  /** The highest bitrate this version and layer allow: no frame of the stream can be denser. */
  maxBitsPerSecond: number
  /** MPEG-1 rather than MPEG-2 or 2.5: decides where the Xing header sits. */
  version1: boolean
  mono: boolean
}

/** The frame header at `at`, or undefined when the 4 bytes are not a valid one. */
function frameHeader(bytes: Uint8Array, at: number): FrameHeader | undefined {
  if (at + 4 > bytes.length) return undefined
  const first = bytes[at] ?? 0
  const second = bytes[at + 1] ?? 0
  const third = bytes[at + 2] ?? 0
  const fourth = bytes[at + 3] ?? 0
  if (first !== 0xff || (second & 0xe0) !== 0xe0) return undefined
  const versionBits = (second >> 3) & 3 // 0: MPEG-2.5, 1: reserved, 2: MPEG-2, 3: MPEG-1
  const layer = 4 - ((second >> 1) & 3) // bits 3, 2, 1 are layers I, II, III; 0 is reserved
  const bitrateIndex = third >> 4
  const sampleRateIndex = (third >> 2) & 3
  if (versionBits === 1 || layer === 4 || bitrateIndex === 0 || bitrateIndex === 15 || sampleRateIndex === 3) return undefined
  const version1 = versionBits === 3
  const table = version1
    ? layer === 1
      ? BITRATES.version1Layer1
      : layer === 2
        ? BITRATES.version1Layer2
        : BITRATES.version1Layer3
    : layer === 1
      ? BITRATES.version2Layer1
      : BITRATES.version2Layers2And3
  const bitsPerSecond = (table[bitrateIndex - 1] ?? 0) * 1000
  const sampleRate = SAMPLE_RATES[version1 ? 1 : versionBits === 2 ? 2 : 25][sampleRateIndex] ?? 0
  const padding = (third >> 1) & 1
  const samples = layer === 1 ? 384 : layer === 3 && !version1 ? 576 : 1152
  // Bytes per frame: samples / 8 bits per byte * bitrate / sample rate, in 4-byte slots for layer I.
  const length =
    layer === 1 ? (Math.floor((12 * bitsPerSecond) / sampleRate) + padding) * 4 : Math.floor(((samples / 8) * bitsPerSecond) / sampleRate) + padding
  return { length, samples, sampleRate, bitsPerSecond, maxBitsPerSecond: (table[13] ?? 0) * 1000, version1, mono: fourth >> 6 === 3 }
}

/** The offset past any ID3v2 tags at the start of the file (several may follow one another). */
export async function skipId3v2(window: ByteWindow): Promise<number> {
  let position = 0
  for (let tags = 0; tags < 4; tags++) {
    const header = await window.read(position, 10)
    if (header.length < 10 || ascii(header, 0, 3) !== 'ID3') break
    // Sizes are "syncsafe": 7 bits a byte. A footer, when flagged, adds another 10 bytes.
    const size = (((header[6] ?? 0) & 0x7f) << 21) | (((header[7] ?? 0) & 0x7f) << 14) | (((header[8] ?? 0) & 0x7f) << 7) | ((header[9] ?? 0) & 0x7f)
    position += 10 + size + ((header[5] ?? 0) & 0x10 ? 10 : 0)
  }
  return position
}

export function startsLikeMpegAudio(bytes: Uint8Array): boolean {
  return frameHeader(bytes, 0) !== undefined
}

/**
 * Where the first frame starts: a valid header followed by another valid one (or the end of
 * the file). The search covers 64 KiB of a 128 KiB read and no frame is longer than 2,881
 * bytes, so the following header is always inside what was read: one read, however many
 * false syncs the bytes hold.
 */
async function firstFrame(window: ByteWindow, from: number): Promise<{ at: number; header: FrameHeader } | undefined> {
  const region = await window.read(from, MAX_READ)
  for (let offset = 0; offset < SYNC_SEARCH_BYTES && offset + 4 <= region.length; offset++) {
    const header = frameHeader(region, offset)
    if (!header) continue
    const next = offset + header.length
    if (from + next + 4 > window.size || frameHeader(region, next)) return { at: from + offset, header }
  }
  return undefined
}

/** Frames a Xing/Info or VBRI header in the first frame says the stream has. */
function headerFrameCount(frame: Uint8Array, header: FrameHeader): number | undefined {
  // Xing sits after the side information, whose size depends on version and channels.
  const xing = 4 + (header.version1 ? (header.mono ? 17 : 32) : header.mono ? 9 : 17)
  const tag = ascii(frame, xing, 4)
  if ((tag === 'Xing' || tag === 'Info') && (uint32BigEndian(frame, xing + 4) & 1) === 1) return uint32BigEndian(frame, xing + 8)
  // VBRI (Fraunhofer) sits 32 bytes after the header: tag, version, delay, quality, bytes, frames.
  if (ascii(frame, 36, 4) === 'VBRI') return uint32BigEndian(frame, 36 + 14)
  return undefined
}

export async function readMpegAudio(window: ByteWindow, audioStart: number): Promise<AudioReading | undefined> {
  const first = await firstFrame(window, audioStart)
  if (!first) return undefined
  const { at, header } = first
  const claimedFrames = headerFrameCount(await window.read(at, 64), header)
  const claimedSeconds =
    claimedFrames === undefined
      ? (window.size - at) / (header.bitsPerSecond / 8) // constant bitrate: every frame like the first
      : (claimedFrames * header.samples) / header.sampleRate

  // Count the frames. Whatever stops the walk (a bad header, the cap), the bytes left over are
  // counted at the fallback rate: a decoder would resynchronise and might find more frames.
  // Trailing tags (ID3v1, APEv2) are counted so too: an APE tag's size is a claim, and a
  // "tag" said to cover the rest of the file could hide frames a decoder will play.
  let position = at
  let frames = 0
  let seconds = 0
  let valid = true
  while (valid && position < window.size && frames < MAX_FRAMES) {
    const chunk = await window.read(position, MAX_READ)
    if (chunk.length < 4) break
    let offset = 0
    while (offset + 4 <= chunk.length && frames < MAX_FRAMES) {
      const frame = frameHeader(chunk, offset)
      if (!frame) {
        valid = false
        break
      }
      seconds += frame.samples / frame.sampleRate
      offset += frame.length
      frames++
    }
    position += offset
  }
  const unaccounted = Math.max(0, window.size - position)
  return {
    container: 'mp3',
    codec: 'mpeg-audio',
    claimedSeconds: plausibleSeconds(claimedSeconds),
    countedSeconds: seconds + unaccounted / FALLBACK_BYTES_PER_SECOND,
    maxBytesPerSecond: header.maxBitsPerSecond / 8,
  }
}
