import { type AudioReading, ascii, type ByteWindow, plausibleSeconds, uint32BigEndian, uint64BigEndian } from './reading'

/**
 * MP4 / M4A (ISO base media): the movie header (mvhd) and each sound track's media header
 * (mdhd) give a duration in units of their timescale. The moov box may sit before or after
 * the media data, so the top level is walked box by box, reading only headers and skipping
 * bodies by their size. Counting the AAC frames (the stsz table) would check the claim but
 * needs the sample description's rate as well; the claim is bounded by AAC's bitrate instead.
 */

/** Box types an ISO media file starts with. */
export const ISO_FIRST_BOX_TYPES = new Set(['ftyp', 'moov', 'mdat', 'free', 'skip', 'wide', 'pdin'])

/**
 * AAC-LC allows 6,144 bits per channel per 1,024-sample frame: 288 kbit/s a channel at 48 kHz.
 * 512 kbit/s is generous for the mono or stereo speech sent for transcription; a denser file
 * (ALAC, high-rate stereo AAC) only gets a larger hold than it needs.
 */
const MAX_BYTES_PER_SECOND = 512_000 / 8

/** Boxes visited in all, across every level: honest files have a few dozen before moov's end. */
const MAX_BOXES = 1024

interface Box {
  type: string
  bodyStart: number
  end: number
}

/** The boxes between `start` and `end`, each from its header alone; stops at a malformed one. */
async function* boxes(window: ByteWindow, start: number, end: number, budget: { boxes: number }): AsyncGenerator<Box> {
  let position = start
  while (position + 8 <= end && budget.boxes-- > 0) {
    const header = await window.read(position, 16)
    let size = uint32BigEndian(header, 0)
    let headerSize = 8
    if (size === 1) {
      size = uint64BigEndian(header, 8)
      headerSize = 16
    } else if (size === 0) {
      size = end - position // the box runs to the end of its parent
    }
    if (size < headerSize) return
    yield { type: ascii(header, 4, 4), bodyStart: position + headerSize, end: Math.min(end, position + size) }
    position += size
  }
}

/** Seconds in an mvhd or mdhd body: version 1 has 64-bit times, version 0 32-bit. */
async function headerSeconds(window: ByteWindow, box: Box): Promise<number | undefined> {
  const body = await window.read(box.bodyStart, 32)
  const version1 = body[0] === 1
  const timescale = uint32BigEndian(body, version1 ? 20 : 12)
  const duration = version1 ? uint64BigEndian(body, 24) : uint32BigEndian(body, 16)
  // All ones means "unknown" (fragmented files leave the real length to their fragments).
  const unknown = version1 ? uint32BigEndian(body, 24) === 0xffffffff && uint32BigEndian(body, 28) === 0xffffffff : duration === 0xffffffff
  return unknown || timescale === 0 ? undefined : plausibleSeconds(duration / timescale)
}

export async function readIsoMedia(window: ByteWindow): Promise<AudioReading> {
  const budget = { boxes: MAX_BOXES }
  let movieSeconds: number | undefined
  const soundSeconds: number[] = []
  for await (const top of boxes(window, 0, window.size, budget)) {
    if (top.type !== 'moov') continue
    for await (const child of boxes(window, top.bodyStart, top.end, budget)) {
      if (child.type === 'mvhd') movieSeconds = await headerSeconds(window, child)
      if (child.type !== 'trak') continue
      for await (const trackChild of boxes(window, child.bodyStart, child.end, budget)) {
        if (trackChild.type !== 'mdia') continue
        let handler = ''
        let mediaSeconds: number | undefined
        for await (const mediaChild of boxes(window, trackChild.bodyStart, trackChild.end, budget)) {
          // hdlr: version and flags (4), pre_defined (4), then the handler type: 'soun' for audio.
          if (mediaChild.type === 'hdlr') handler = ascii(await window.read(mediaChild.bodyStart + 8, 4), 0, 4)
          if (mediaChild.type === 'mdhd') mediaSeconds = await headerSeconds(window, mediaChild)
        }
        if (handler === 'soun' && mediaSeconds !== undefined) soundSeconds.push(mediaSeconds)
      }
    }
    break
  }
  // The longest sound track: a provider may transcribe any of them. No track: the movie's length.
  const claimedSeconds = soundSeconds.length > 0 ? Math.max(...soundSeconds) : movieSeconds
  return { container: 'mp4', claimedSeconds, maxBytesPerSecond: MAX_BYTES_PER_SECOND }
}
