import { describe, expect, test } from 'bun:test'
import { type SseEvent, writeSse } from '../../src/streaming/sse'
import { sseEventsOf } from '../support/sse-events'

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk))
      controller.close()
    },
  })
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<SseEvent[]> {
  return sseEventsOf(stream)
}

describe('SSE', () => {
  test('LF, CRLF and CR line ends, split anywhere across chunks', async () => {
    const text = 'event: a\ndata: 1\n\nevent: b\r\ndata: 2\r\n\r\ndata: 3\r\rdata: {"x":\ndata: 1}\n\n'
    const expected = [{ event: 'a', data: '1' }, { event: 'b', data: '2' }, { data: '3' }, { data: '{"x":\n1}' }]
    for (let split = 0; split <= text.length; split++) {
      const events = await collect(streamOf(text.slice(0, split), text.slice(split)))
      expect(events.map(({ event, data }) => (event ? { event, data } : { data }))).toEqual(expected)
    }
  })
  test('comments are skipped; a last event without its blank line still counts', async () => {
    expect((await collect(streamOf(': keep-alive\n\ndata: [DONE]'))).map((event) => event.data)).toEqual(['[DONE]'])
  })
  test('written events read back the same', async () => {
    const events = [{ event: 'message_start', data: '{"a":1}' }, { data: 'two\nlines' }]
    expect((await collect(streamOf(events.map(writeSse).join('')))).map(({ event, data }) => (event ? { event, data } : { data }))).toEqual(events)
  })
})
