import { type AudioReading, ascii, type ByteWindow, uint16LittleEndian, uint32LittleEndian } from './reading'

/**
 * RIFF WAVE. For PCM the duration is arithmetic: the audio bytes over the bytes a second of
 * samples takes. The data chunk's declared size is not trusted for it (streaming writers leave
 * it 0 or 0xFFFFFFFF, decoders may read past a short one, and a claim of 4 GB would make an
 * absurd hold): the bytes from the data chunk to the end of the file are. The sample rate, channels and sample
 * width are trusted, because a decoder plays the bytes by them: a header claiming 192 kHz
 * makes the provider hear (and bill) a short file too. Other codecs in WAV (ADPCM, GSM, MP3,
 * ...) are left to the fallback rate: their byte rate field is an unchecked claim.
 */

/** WAVE_FORMAT_PCM, _IEEE_FLOAT, _ALAW, _MULAW: one fixed-size sample per channel per tick. */
const PCM_FORMATS = new Set([1, 3, 6, 7])
const WAVE_FORMAT_EXTENSIBLE = 0xfffe
/** Chunks looked at before the data chunk: real files have a handful. */
const MAX_CHUNKS = 64

export async function readWav(window: ByteWindow): Promise<AudioReading> {
  let format: { tag: number; bytesPerSecond: number } | undefined
  let position = 12
  for (let chunks = 0; chunks < MAX_CHUNKS && position + 8 <= window.size; chunks++) {
    const header = await window.read(position, 8)
    const id = ascii(header, 0, 4)
    const size = uint32LittleEndian(header, 4)
    if (id === 'fmt ' && size >= 16) {
      const formatChunk = await window.read(position + 8, 40)
      let tag = uint16LittleEndian(formatChunk, 0)
      // WAVE_FORMAT_EXTENSIBLE names the real format in the first two bytes of its sub-format GUID.
      if (tag === WAVE_FORMAT_EXTENSIBLE && size >= 40) tag = uint16LittleEndian(formatChunk, 24)
      const channels = uint16LittleEndian(formatChunk, 2)
      const sampleRate = uint32LittleEndian(formatChunk, 4)
      const byteRateField = uint32LittleEndian(formatChunk, 8)
      const bitsPerSample = uint16LittleEndian(formatChunk, 14)
      const computed = sampleRate * channels * Math.ceil(bitsPerSample / 8)
      // Of the computed rate and the header's own field, the lower: the longer duration.
      const bytesPerSecond = byteRateField > 0 ? Math.min(computed, byteRateField) : computed
      format = { tag, bytesPerSecond }
    } else if (id === 'data') {
      if (!format || !PCM_FORMATS.has(format.tag) || !(format.bytesPerSecond > 0))
        return { container: 'wav', codec: format ? `wav-format-${format.tag}` : undefined }
      const dataStart = position + 8
      return {
        container: 'wav',
        codec: 'pcm',
        // No claimed duration: the declared data size is the part of the header not to trust.
        countedSeconds: (window.size - dataStart) / format.bytesPerSecond,
        maxBytesPerSecond: format.bytesPerSecond,
      }
    }
    // Chunks are padded to an even length.
    position += 8 + size + (size & 1)
  }
  return { container: 'wav' }
}
