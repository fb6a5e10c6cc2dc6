/**
 * Server-sent events as the HTML standard defines them: `field: value` lines, an empty line
 * ends an event, and LF, CRLF or CR all end a line. Streams are parsed into events and written
 * back from events; nothing edits stream text in place.
 */
export interface SseEvent {
  event?: string
  data: string
  id?: string
}

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  let buffer = ''
  let event: { event?: string; id?: string; data: string[] } = { data: [] }
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true })
    for (let lineEnd = findLineEnd(buffer); lineEnd >= 0; lineEnd = findLineEnd(buffer)) {
      const line = buffer.slice(0, lineEnd)
      // A CR at the very end may be the first half of CRLF: wait for the next chunk.
      const separator = buffer[lineEnd] === '\r' && buffer[lineEnd + 1] === '\n' ? 2 : 1
      if (buffer[lineEnd] === '\r' && lineEnd + 1 === buffer.length) break
      buffer = buffer.slice(lineEnd + separator)
      if (line === '') {
        if (event.data.length > 0 || event.event) yield { data: event.data.join('\n'), event: event.event, id: event.id }
        event = { data: [] }
        continue
      }
      if (line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1))
      if (field === 'data') event.data.push(value)
      else if (field === 'event') event.event = value
      else if (field === 'id') event.id = value
    }
  }
  buffer += decoder.decode()
  if (buffer !== '' && buffer.startsWith('data')) event.data.push(buffer.replace(/^data: ?/, ''))
  if (event.data.length > 0) yield { data: event.data.join('\n'), event: event.event, id: event.id }
}

function findLineEnd(buffer: string): number {
  const lf = buffer.indexOf('\n')
  const cr = buffer.indexOf('\r')
  if (cr < 0) return lf
  if (lf < 0) return cr
  return Math.min(cr, lf)
}

export function writeSse(event: SseEvent): string {
  const lines = event.event ? [`event: ${event.event}`] : []
  for (const line of event.data.split('\n')) lines.push(`data: ${line}`)
  return `${lines.join('\n')}\n\n`
}
