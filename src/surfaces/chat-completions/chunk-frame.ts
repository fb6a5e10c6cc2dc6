/**
 * A plain chunk's text around its content (up to its opening quote, from its closing quote), as
 * the upstream wrote it and as the client gets it (an SSE event). The chunks of one stream differ
 * in their content alone (id, created, model and the rest stay the same), so the next chunk that
 * starts and ends as this one did, with a content between that holds no quote or backslash, is
 * this chunk with another content: it is shown as this frame around it, with no scan.
 *
 * The frame is kept as bytes too (`wire`), so a network chunk that is exactly one such event is
 * recognised and relayed without being decoded, framed or rebuilt as text: the common chunk of a
 * stream then leaves almost nothing behind for the collector, which keeps an open stream small.
 */
export interface ChunkFrame {
  before: string
  after: string
  shownBefore: string
  shownAfter: string
  /** Made when first needed (wireOf): a stream whose chunks never match needs none. */
  wire?: FrameBytes
}

/** The frame as bytes: the whole event around its content (`data: ` to the blank line), as received and as shown. */
export interface FrameBytes {
  before: Uint8Array
  after: Uint8Array
  shownBefore: Uint8Array
  shownAfter: Uint8Array
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** The frame of `data`, whose content is the plain string from `contentStart` to its closing quote at `contentEnd`; `text` is data as shown. */
export function frameAround(data: string, text: string, contentStart: number, contentEnd: number): ChunkFrame {
  // `"content":` is in the text once, as in the data: the splices add none (a shown model is escaped JSON).
  const shownStart = text.indexOf('"content":"') + 11
  return {
    before: data.slice(0, contentStart),
    after: data.slice(contentEnd),
    shownBefore: `data: ${text.slice(0, shownStart)}`,
    shownAfter: `${text.slice(shownStart + contentEnd - contentStart)}\n\n`,
  }
}

/** The frame's bytes, made once per frame. */
export function wireOf(frame: ChunkFrame): FrameBytes {
  frame.wire ??= {
    before: encoder.encode(`data: ${frame.before}`),
    after: encoder.encode(`${frame.after}\n\n`),
    shownBefore: encoder.encode(frame.shownBefore),
    shownAfter: encoder.encode(frame.shownAfter),
  }
  return frame.wire
}

/** The content of `data` when it is `frame`'s chunk with another plain content; else undefined. */
export function contentInFrame(data: string, frame: ChunkFrame): string | undefined {
  const { before, after } = frame
  if (data.length < before.length + after.length || !data.startsWith(before) || !data.endsWith(after)) return undefined
  const content = data.slice(before.length, data.length - after.length)
  return content.includes('"') || content.includes('\\') ? undefined : content
}

const QUOTE = 34
const BACKSLASH = 92

/**
 * The content of `event` (one whole event's bytes, `data: ` to its blank line) when it is the
 * frame's chunk with another content of printable ASCII without a quote or backslash; else
 * undefined, and the event is read as text. Such an event is exactly the one contentInFrame
 * recognises in the decoded text, with the same content: nothing but the content differs, and
 * the content can hold no line end, so the bytes are one event.
 */
export function contentInFrameBytes(event: Uint8Array, wire: FrameBytes): string | undefined {
  const { before, after } = wire
  const contentEnd = event.length - after.length
  if (contentEnd < before.length) return undefined
  for (let index = 0; index < before.length; index++) if (event[index] !== before[index]) return undefined
  for (let index = 0; index < after.length; index++) if (event[contentEnd + index] !== after[index]) return undefined
  for (let index = before.length; index < contentEnd; index++) {
    const byte = event[index] as number
    if (byte < 32 || byte > 126 || byte === QUOTE || byte === BACKSLASH) return undefined
  }
  return decoder.decode(event.subarray(before.length, contentEnd))
}
