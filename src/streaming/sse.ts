import { UpstreamError } from '../errors/kinds'

/**
 * Server-sent events as the HTML standard defines them: `field: value` lines, an empty line
 * ends an event, and LF, CRLF or CR all end a line. The framer below cuts a stream into events
 * without copying more than it must, so a relay can pass an event on as it came (`raw`) and
 * rewrite only the ones it has to.
 */
export interface SseEvent {
  event?: string
  data: string
  id?: string
}

/** An event as framed from a stream: its fields, and its text as it came (lines ending in LF, with its blank line). */
export interface FramedSseEvent extends SseEvent {
  raw: string
}

/**
 * The most characters one event may take before its blank line. Real events are a few hundred
 * bytes (a whole response object at most some hundred KB); an upstream sending one endless line
 * would otherwise grow the gateway's memory without bound.
 */
export const MAX_SSE_EVENT_CHARS = 1024 * 1024

/**
 * Cuts decoded stream text into events. Text may split an event anywhere (even between the CR
 * and LF of one line end) and may hold many events. Line ends are made LF as the text arrives,
 * so the search for an event's end is one indexOf. Throws UpstreamError when an event outgrows
 * MAX_SSE_EVENT_CHARS.
 */
export class SseFramer {
  private buffer = ''
  /** The text ended with CR: whether it was a whole line end or half of CRLF shows in the next text. */
  private pendingCr = false

  /** The events `text` completes, in order. */
  push(text: string): FramedSseEvent[] {
    let added = text
    if (this.pendingCr) {
      added = `\r${added}`
      this.pendingCr = false
    }
    if (added.endsWith('\r')) {
      added = added.slice(0, -1)
      this.pendingCr = true
    }
    if (added.includes('\r')) added = added.replace(/\r\n?/g, '\n')
    const buffer = this.buffer === '' ? added : this.buffer + added
    const events: FramedSseEvent[] = []
    let start = 0
    while (buffer.charCodeAt(start) === 10) start++
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n', start)) {
      // Leading blank lines (a stream starting with LF, or three in a row) end no event.
      if (end > start) {
        const event = parseEvent(buffer.slice(start, end + 2))
        if (event) events.push(event)
      }
      start = end + 2
      // A blank line with no event before it dispatches nothing.
      while (buffer.charCodeAt(start) === 10) start++
    }
    this.buffer = start === 0 ? buffer : buffer.slice(start)
    if (this.buffer.length > MAX_SSE_EVENT_CHARS) throw new UpstreamError(`The upstream sent a stream event longer than ${MAX_SSE_EVENT_CHARS} characters.`)
    return events
  }

  /** The stream ended: a last event without its blank line still counts. */
  end(): FramedSseEvent[] {
    const rest = this.buffer + (this.pendingCr ? '\n' : '')
    this.buffer = ''
    this.pendingCr = false
    if (rest.trim() === '') return []
    const event = parseEvent(rest.endsWith('\n\n') ? rest : `${rest.endsWith('\n') ? rest : `${rest}\n`}\n`)
    return event && event.data !== '' ? [event] : []
  }
}

/** One event's fields from its text (LF line ends, blank line included); undefined for an event of comments only. */
function parseEvent(raw: string): FramedSseEvent | undefined {
  // The common shape, one `data: ` line: no line split.
  if (raw.startsWith('data: ') && raw.indexOf('\n') === raw.length - 2) return { data: raw.slice(6, -2), raw }
  const data: string[] = []
  let event: string | undefined
  let id: string | undefined
  for (const line of raw.slice(0, -2).split('\n')) {
    if (line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1))
    if (field === 'data') data.push(value)
    else if (field === 'event') event = value
    else if (field === 'id') id = value
  }
  if (data.length === 0 && !event) return undefined
  return { data: data.join('\n'), event, id, raw }
}

export function writeSse(event: SseEvent): string {
  // Data of one line (JSON always is): no split and join.
  if (!event.data.includes('\n')) return event.event ? `event: ${event.event}\ndata: ${event.data}\n\n` : `data: ${event.data}\n\n`
  const lines = event.event ? [`event: ${event.event}`] : []
  for (const line of event.data.split('\n')) lines.push(`data: ${line}`)
  return `${lines.join('\n')}\n\n`
}

/** Events as stream text, in order. */
export function writeSseEvents(events: SseEvent[]): string {
  let text = ''
  for (const event of events) text += writeSse(event)
  return text
}
