import { type AudioReading, ascii, type ByteWindow, plausibleSeconds, uint32BigEndian } from './reading'

/**
 * FLAC: STREAMINFO, the first metadata block, holds the total samples (0 when the encoder did
 * not know) and the sample rate. FLAC is lossless, so a stream is never much denser than the
 * raw PCM it encodes (a frame that does not compress is stored verbatim, plus a few header
 * bytes): the PCM byte rate from the same block bounds the duration from below. That bound is
 * loose (speech compresses about twofold, silence far more), so a short total-samples claim
 * still lowers the hold to about half the audio at worst. Frames have no length field, so
 * counting them would mean decoding: not done.
 */
export async function readFlac(window: ByteWindow, start: number): Promise<AudioReading> {
  // "fLaC", then a metadata block header: last-block flag and type (0 is STREAMINFO), 24-bit length.
  const bytes = await window.read(start, 4 + 4 + 34)
  if (bytes.length < 42 || ascii(bytes, 0, 4) !== 'fLaC' || ((bytes[4] ?? 0) & 0x7f) !== 0) return { container: 'flac' }
  const info = bytes.subarray(8)
  // Bytes 10-17 of STREAMINFO: sample rate (20 bits), channels - 1 (3), bits per sample - 1 (5), total samples (36).
  const sampleRate = ((info[10] ?? 0) << 12) | ((info[11] ?? 0) << 4) | ((info[12] ?? 0) >> 4)
  const channels = (((info[12] ?? 0) >> 1) & 7) + 1
  const bitsPerSample = ((((info[12] ?? 0) & 1) << 4) | ((info[13] ?? 0) >> 4)) + 1
  const totalSamples = ((info[13] ?? 0) & 0x0f) * 0x100000000 + uint32BigEndian(info, 14)
  if (sampleRate === 0) return { container: 'flac', codec: 'flac' }
  return {
    container: 'flac',
    codec: 'flac',
    claimedSeconds: plausibleSeconds(totalSamples / sampleRate),
    maxBytesPerSecond: (sampleRate * channels * bitsPerSample) / 8,
  }
}
