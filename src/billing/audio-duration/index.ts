import { readFlac } from './flac'
import { ISO_FIRST_BOX_TYPES, readIsoMedia } from './iso-media'
import { readMatroska } from './matroska'
import { readMpegAudio, skipId3v2, startsLikeMpegAudio } from './mpeg-audio'
import { readOgg } from './ogg'
import { type AudioReading, ascii, ByteWindow, FALLBACK_BYTES_PER_SECOND, MAX_HOLD_SECONDS, plausibleSeconds, uint32BigEndian } from './reading'
import { readWav } from './wav'

export { type AudioReading, FALLBACK_BYTES_PER_SECOND, MAX_AUDIO_BYTES, MAX_HOLD_SECONDS } from './reading'

/**
 * What the file's container says about its duration, by its first bytes (never its name or
 * declared type). Undefined for a container not recognised; never throws, whatever the bytes.
 */
export async function readAudioDuration(file: Blob): Promise<AudioReading | undefined> {
  try {
    const window = new ByteWindow(file)
    const head = await window.read(0, 12)
    if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 4) === 'WAVE') return await readWav(window)
    if (ascii(head, 0, 4) === 'OggS') return await readOgg(window)
    if (uint32BigEndian(head, 0) === 0x1a45dfa3) return await readMatroska(window)
    if (ISO_FIRST_BOX_TYPES.has(ascii(head, 4, 4))) return await readIsoMedia(window)
    // FLAC and MP3 may both follow ID3v2 tags.
    const audioStart = await skipId3v2(window)
    const marker = await window.read(audioStart, 4)
    if (ascii(marker, 0, 4) === 'fLaC') return await readFlac(window, audioStart)
    if (audioStart > 0 || startsLikeMpegAudio(marker)) return await readMpegAudio(window, audioStart)
    return undefined
  } catch {
    return undefined
  }
}

/**
 * Seconds of audio a transcription's hold should cover. The provider bills the duration it
 * decodes, which the header only claims: so the hold takes the longest of the header's claim,
 * the duration counted from the stream where the parser counts one, and the file's size over
 * the codec's densest plausible bitrate (a file claiming 1 second for 5 MB of mp3 is held for
 * at least 5 MB at 320 kbit/s). With nothing read, the size at the fallback rate. Always
 * finite, positive for a non-empty file, and at most MAX_HOLD_SECONDS.
 */
export async function transcriptionHoldSeconds(file: Blob): Promise<number> {
  const reading = await readAudioDuration(file)
  const fallback = file.size / FALLBACK_BYTES_PER_SECOND
  const read = [reading?.claimedSeconds, reading?.countedSeconds].filter(
    (value): value is number => value !== undefined && plausibleSeconds(value) !== undefined,
  )
  let seconds = read.length > 0 ? Math.max(...read) : fallback
  const densest = reading?.maxBytesPerSecond
  if (densest !== undefined && densest > 0) seconds = Math.max(seconds, file.size / densest)
  if (Number.isNaN(seconds)) seconds = fallback
  return Math.min(Math.max(seconds, 0), MAX_HOLD_SECONDS)
}
