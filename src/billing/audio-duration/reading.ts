/**
 * What every container parser shares: the shape of a reading, the conservative rate for bytes
 * nobody could read, and bounded random access to the file's bytes.
 */

/**
 * Bytes per second assumed for audio whose duration cannot be read: 6 kbit/s, Opus's lowest
 * bitrate (RFC 6716 §2.1.1) and below every other codec clients upload for speech (MP3 and AAC
 * bottom out near 8 kbit/s). Containers only add bytes on top, so for any file encoded at 6
 * kbit/s or more this overstates the duration, which is the safe side for a hold.
 */
export const FALLBACK_BYTES_PER_SECOND = 750

/** The largest audio file transcriptions accept (OpenAI's own limit). */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024

/**
 * The longest duration a hold assumes: a full 25 MiB file at the fallback rate, about 9.7
 * hours. Any header claiming more (up to 1e12 seconds, say) is held at this; a real upload
 * longer than this would need a bitrate below Opus's lowest. Counting walks stop here too.
 */
export const MAX_HOLD_SECONDS = Math.ceil(MAX_AUDIO_BYTES / FALLBACK_BYTES_PER_SECOND)

/** How a file's duration was read. All of it is client input, to be weighed, not trusted. */
export interface AudioReading {
  container: 'mp3' | 'mp4' | 'ogg' | 'wav' | 'flac' | 'webm'
  /** The codec inside, where the parser looked (`opus`, `vorbis`, `pcm`, ...). */
  codec?: string
  /** The duration the header claims (Xing frames, mdhd, granule position, Duration, ...). */
  claimedSeconds?: number
  /**
   * The duration counted from the stream itself, where that is cheap and what a decoder would
   * play (MPEG frames, Opus packets, PCM bytes), plus any bytes it could not account for at
   * the fallback rate.
   */
  countedSeconds?: number
  /**
   * The densest the codec plausibly gets, in bytes per second: the file's size over it is the
   * least duration the file can hold, whatever its header says.
   */
  maxBytesPerSecond?: number
}

/** A positive, finite number of seconds, or undefined: what a header field may be trusted to be. */
export function plausibleSeconds(seconds: number): number | undefined {
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined
}

/** The most one read returns: above an Ogg page (65,307 bytes), far below the 25 MiB file. */
export const MAX_READ = 128 * 1024

/**
 * Random access to a Blob's bytes through one cached window: parsers ask for small ranges
 * (a box header, a frame header, a page), and neighbouring asks are served by one read. No
 * read is sized by a field of the file: every length is capped at MAX_READ.
 */
export class ByteWindow {
  readonly size: number
  private start = 0
  private bytes = new Uint8Array(0)

  constructor(private readonly blob: Blob) {
    this.size = blob.size
  }

  /** Up to `length` bytes from `offset`: fewer at the end of the file, none past it. */
  async read(offset: number, length: number): Promise<Uint8Array> {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset >= this.size || !(length > 0)) return new Uint8Array(0)
    const end = Math.min(this.size, offset + Math.min(length, MAX_READ))
    if (offset < this.start || end > this.start + this.bytes.length) {
      this.start = offset
      this.bytes = new Uint8Array(await this.blob.slice(offset, Math.min(this.size, offset + MAX_READ)).arrayBuffer())
    }
    return this.bytes.subarray(offset - this.start, end - this.start)
  }
}

export function ascii(bytes: Uint8Array, at: number, length: number): string {
  let text = ''
  for (let index = at; index < at + length; index++) text += String.fromCharCode(bytes[index] ?? 0)
  return text
}

export function uint32BigEndian(bytes: Uint8Array, at: number): number {
  return (bytes[at] ?? 0) * 0x1000000 + (((bytes[at + 1] ?? 0) << 16) | ((bytes[at + 2] ?? 0) << 8) | (bytes[at + 3] ?? 0))
}

/** Exact below 2^53; larger values lose low bits, which no duration or size here needs. */
export function uint64BigEndian(bytes: Uint8Array, at: number): number {
  return uint32BigEndian(bytes, at) * 0x100000000 + uint32BigEndian(bytes, at + 4)
}

export function uint16LittleEndian(bytes: Uint8Array, at: number): number {
  return (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8)
}

export function uint32LittleEndian(bytes: Uint8Array, at: number): number {
  return (bytes[at + 3] ?? 0) * 0x1000000 + (((bytes[at + 2] ?? 0) << 16) | ((bytes[at + 1] ?? 0) << 8) | (bytes[at] ?? 0))
}
