import { type AudioReading, type ByteWindow, plausibleSeconds } from './reading'

/**
 * WebM / Matroska (EBML): the Segment's Info element holds Duration (a float, in units of
 * TimecodeScale nanoseconds, 1 ms by default). Info precedes the first Cluster in files
 * that have one, so the walk reads element headers from the start of the Segment and stops at
 * the first Cluster. Live recordings (MediaRecorder in browsers) write no Duration: those fall
 * back to the conservative rate. The claim is bounded by the bitrate of the codecs WebM audio
 * carries (Opus, Vorbis): a denser file only gets a larger hold than it needs.
 */

const EBML_HEADER = 0x1a45dfa3
const SEGMENT = 0x18538067
const INFO = 0x1549a966
const CLUSTER = 0x1f43b675
const TIMECODE_SCALE = 0x2ad7b1
const DURATION = 0x4489
/** Opus and Vorbis top out near 512 kbit/s (see ogg.ts). */
const MAX_BYTES_PER_SECOND = 512_000 / 8
/** Elements looked at in all: an honest file reaches Info within a handful. */
const MAX_ELEMENTS = 256
/** Info holds a few short fields (and two titles): larger is not an Info worth reading. */
const MAX_INFO_BYTES = 64 * 1024

interface Element {
  id: number
  /** Where the element's data starts. */
  dataStart: number
  /** The data's size; undefined for "unknown" (all ones), as streaming writers leave it. */
  size: number | undefined
}

/**
 * A variable-length integer at `at`: its length is one more than the leading zero bits of its
 * first byte (at most 8). IDs keep the length marker; sizes drop it.
 */
function variableInteger(bytes: Uint8Array, at: number, keepMarker: boolean): { value: number; length: number; allOnes: boolean } | undefined {
  const first = bytes[at] ?? 0
  if (first === 0) return undefined
  const length = Math.clz32(first) - 23
  if (at + length > bytes.length) return undefined
  const markerMask = 0xff >> length
  let value = keepMarker ? first : first & markerMask
  let allOnes = (first & markerMask) === markerMask
  for (let index = 1; index < length; index++) {
    const byte = bytes[at + index] ?? 0
    value = value * 256 + byte
    allOnes &&= byte === 0xff
  }
  return { value, length, allOnes }
}

function elementAt(bytes: Uint8Array, at: number, base: number): Element | undefined {
  const id = variableInteger(bytes, at, true)
  if (!id || id.length > 4) return undefined
  const size = variableInteger(bytes, at + id.length, false)
  if (!size) return undefined
  return { id: id.value, dataStart: base + at + id.length + size.length, size: size.allOnes ? undefined : size.value }
}

async function readElement(window: ByteWindow, position: number): Promise<Element | undefined> {
  return elementAt(await window.read(position, 12), 0, position)
}

function unsignedInteger(bytes: Uint8Array): number {
  let value = 0
  for (const byte of bytes) value = value * 256 + byte
  return value
}

/** Seconds from an Info element's data: Duration times TimecodeScale. */
function infoSeconds(info: Uint8Array): number | undefined {
  let timecodeScale = 1_000_000
  let duration: number | undefined
  let at = 0
  for (let elements = 0; elements < MAX_ELEMENTS && at < info.length; elements++) {
    const element = elementAt(info, at, 0)
    if (!element || element.size === undefined || element.dataStart + element.size > info.length) break
    const data = info.subarray(element.dataStart, element.dataStart + element.size)
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
    if (element.id === TIMECODE_SCALE && data.length >= 1 && data.length <= 8) timecodeScale = unsignedInteger(data)
    if (element.id === DURATION && data.length === 4) duration = view.getFloat32(0)
    if (element.id === DURATION && data.length === 8) duration = view.getFloat64(0)
    at = element.dataStart + element.size
  }
  return duration === undefined ? undefined : plausibleSeconds((duration * timecodeScale) / 1e9)
}

export async function readMatroska(window: ByteWindow): Promise<AudioReading> {
  const reading: AudioReading = { container: 'webm', maxBytesPerSecond: MAX_BYTES_PER_SECOND }
  const header = await readElement(window, 0)
  if (!header || header.id !== EBML_HEADER || header.size === undefined) return reading
  let position = header.dataStart + header.size
  let segmentEnd = window.size
  let inSegment = false
  for (let elements = 0; elements < MAX_ELEMENTS && position < segmentEnd; elements++) {
    const element = await readElement(window, position)
    if (!element) break
    if (!inSegment && element.id === SEGMENT) {
      // Step into the Segment: its children follow its header.
      inSegment = true
      if (element.size !== undefined) segmentEnd = Math.min(segmentEnd, element.dataStart + element.size)
      position = element.dataStart
      continue
    }
    if (inSegment && element.id === INFO) {
      if (element.size === undefined || element.size > MAX_INFO_BYTES) break
      return { ...reading, claimedSeconds: infoSeconds(await window.read(element.dataStart, element.size)) }
    }
    // Audio data before any Info, or an element of unknown size: nothing more to learn.
    if (element.id === CLUSTER || element.size === undefined) break
    position = element.dataStart + element.size
  }
  return reading
}
