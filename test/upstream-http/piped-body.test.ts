import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { sseSource, upstreamBodyOf } from '../../src/dispatch/stream-sources'
import { StreamIdleTimeoutError } from '../../src/errors/kinds'
import type { FramedSseEvent } from '../../src/streaming/sse'
import { type BodySink, createUpstreamClient, type RawBody, rawBodyOf, readerBody } from '../../src/upstream-http/client'
import { rawServer } from './servers'

/**
 * A raw body piped (pushed) rather than pulled: each network chunk's body bytes go to the sink
 * as the socket delivers them; pause holds them back; the end or a failure is told once; the
 * keep-alive socket goes back to its pool after a whole body. The same for a body read from a
 * stream (fetch's), and the stream source's silence clock, which must not run while the
 * client's connection is full.
 */
const encoder = new TextEncoder()
const chunked = (text: string) => `${encoder.encode(text).length.toString(16)}\r\n${text}\r\n`
const HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n'

const server = rawServer(async (connection, request) => {
  const path = request.slice(5, request.indexOf(' ', 5))
  const socket = connection.socket
  socket.write(HEAD)
  if (path === '/cut') {
    socket.write(chunked('data: 1\n\n'))
    await Bun.sleep(20)
    socket.end()
    return
  }
  if (path === '/slow-then-done') {
    // One event, silence longer than the test's deadline, then the end.
    socket.write(chunked('data: 1\n\n'))
    await Bun.sleep(300)
    socket.write(`${chunked('data: [DONE]\n\n')}0\r\n\r\n`)
    return
  }
  if (path === '/silent') {
    socket.write(chunked('data: 1\n\n'))
    return
  }
  for (let index = 0; index < 8; index++) {
    socket.write(chunked(`data: ${index}\n\n`))
    await Bun.sleep(15)
  }
  socket.write('0\r\n\r\n')
})
const client = createUpstreamClient()
afterAll(() => {
  client.close()
  server.stop()
})

interface Heard {
  text: string
  ends: number
  failures: unknown[]
  /** When each chunk came (performance.now()). */
  at: number[]
}

/** A sink that records what it is told, and resolves once the body ended or failed. */
function recordingSink(): { sink: BodySink; heard: Heard; settled: Promise<void> } {
  const heard: Heard = { text: '', ends: 0, failures: [], at: [] }
  const decoder = new TextDecoder()
  let settle = () => {}
  const settled = new Promise<void>((resolve) => {
    settle = resolve
  })
  const sink: BodySink = {
    bytes(chunk) {
      heard.text += decoder.decode(chunk, { stream: true })
      heard.at.push(performance.now())
    },
    end() {
      heard.ends++
      settle()
    },
    fail(error) {
      heard.failures.push(error)
      settle()
    },
  }
  return { sink, heard, settled }
}

const post = async (path: string, signal?: AbortSignal) => client.fetch(`${server.url}${path}`, { method: 'POST', body: '{}', signal })
const rawOf = (response: Response): RawBody => {
  const raw = rawBodyOf(response)
  if (!raw) throw new Error('the own client attached no raw body')
  return raw
}
const EVERY_EVENT = Array.from({ length: 8 }, (_, index) => `data: ${index}\n\n`).join('')

describe('a piped raw body of the own client', () => {
  test('hands on every body byte in order, ends once, and gives its socket back to the pool', async () => {
    const connectionsBefore = server.connections.length
    for (let round = 0; round < 2; round++) {
      const { sink, heard, settled } = recordingSink()
      rawOf(await post('/events')).pipe(sink)
      await settled
      expect(heard).toMatchObject({ text: EVERY_EVENT, ends: 1, failures: [] })
    }
    // The second request went on the first one's socket.
    expect(server.connections.length - connectionsBefore).toBe(1)
  })

  test('pause holds the bytes back until resume, and none is lost', async () => {
    const { sink, heard, settled } = recordingSink()
    const body = rawOf(await post('/events'))
    let paused = false
    let heardWhilePaused = 0
    body.pipe({
      bytes(chunk) {
        if (paused) heardWhilePaused++
        sink.bytes(chunk)
        if (heard.at.length === 1) {
          paused = true
          body.pause()
        }
      },
      end: sink.end,
      fail: sink.fail,
    })
    await Bun.sleep(200)
    const duringPause = heard.at.length
    paused = false
    body.resume()
    await settled
    expect(duringPause).toBe(1)
    expect(heardWhilePaused).toBe(0)
    expect(heard).toMatchObject({ text: EVERY_EVENT, ends: 1, failures: [] })
  })

  test('a body the server cuts short fails the sink once and never ends it', async () => {
    const { sink, heard, settled } = recordingSink()
    rawOf(await post('/cut')).pipe(sink)
    await settled
    await Bun.sleep(20)
    expect(heard.text).toBe('data: 1\n\n')
    expect(heard.ends).toBe(0)
    expect(heard.failures).toHaveLength(1)
    expect(String(heard.failures[0])).toContain('closed')
  })

  test('cancel tells the sink the reason once and closes the socket', async () => {
    const { sink, heard, settled } = recordingSink()
    const body = rawOf(await post('/silent'))
    body.pipe(sink)
    await Bun.sleep(30)
    const reason = new Error('the client left')
    body.cancel(reason)
    await settled
    body.cancel(new Error('again'))
    expect(heard.failures).toEqual([reason])
    expect(heard.ends).toBe(0)
    for (let i = 0; i < 50 && !server.connections.at(-1)?.closed; i++) await Bun.sleep(10)
    expect(server.connections.at(-1)?.closed).toBe(true)
  })

  test('an abort while piping fails the sink with the abort reason', async () => {
    const controller = new AbortController()
    const { sink, heard, settled } = recordingSink()
    rawOf(await post('/silent', controller.signal)).pipe(sink)
    await Bun.sleep(30)
    controller.abort(new Error('aborted by the gateway'))
    await settled
    expect(heard.failures).toHaveLength(1)
    expect(String(heard.failures[0])).toContain('aborted by the gateway')
  })
})

describe('a piped body read from a stream (the global fetch, a fake)', () => {
  const streamOf = (parts: string[], hang = false) =>
    new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const part of parts) controller.enqueue(encoder.encode(part))
        if (!hang) controller.close()
      },
    })

  test('hands on every chunk and ends once; pause holds the next read until resume', async () => {
    const { sink, heard, settled } = recordingSink()
    const body = readerBody(streamOf(['a', 'b', 'c']).getReader())
    body.pipe({
      bytes(chunk) {
        sink.bytes(chunk)
        if (heard.at.length === 1) body.pause()
      },
      end: sink.end,
      fail: sink.fail,
    })
    await Bun.sleep(50)
    expect(heard.text).toBe('a')
    body.resume()
    await settled
    expect(heard).toMatchObject({ text: 'abc', ends: 1, failures: [] })
  })

  test('cancel while a read waits fails the sink with the reason, once', async () => {
    const { sink, heard, settled } = recordingSink()
    const body = readerBody(streamOf(['a'], true).getReader())
    body.pipe(sink)
    await Bun.sleep(20)
    const reason = new Error('stop')
    body.cancel(reason)
    await settled
    await Bun.sleep(20)
    expect(heard).toMatchObject({ text: 'a', ends: 0, failures: [reason] })
  })
})

describe("the stream source's silence clock and a full client connection", () => {
  /** Feeds the source into a sink whose first write is not taken for `fullMs` (the client's connection is full). */
  const feed = (response: Response, idleMs: number, fullMs: number) =>
    new Promise<{ data: string[]; failure?: unknown }>((resolve) => {
      const data: string[] = []
      sseSource(upstreamBodyOf(response), idleMs, () => undefined).start({
        items(items: FramedSseEvent[]) {
          const first = data.length === 0
          data.push(...items.map((item) => item.data))
          return first ? Bun.sleep(fullMs) : undefined
        },
        eventBytes: () => false,
        end: () => resolve({ data }),
        fail: (failure) => resolve({ data, failure }),
      })
    })

  test('the upstream is not timed while the client cannot take more', async () => {
    // The upstream is silent 300 ms, longer than the 150 ms deadline, but the client is full for 400 ms of it.
    const fed = await feed(await post('/slow-then-done'), 150, 400)
    expect(fed).toEqual({ data: ['1', '[DONE]'] })
  })

  test('once the client drained, silence counts again', async () => {
    const started = performance.now()
    const fed = await feed(await post('/silent'), 150, 100)
    expect(fed.data).toEqual(['1'])
    expect(fed.failure).toBeInstanceOf(StreamIdleTimeoutError)
    // The deadline runs from the drain (~100 ms), not from the start.
    expect(performance.now() - started).toBeGreaterThanOrEqual(240)
  })
})

describe('what an open stream keeps', () => {
  test("nothing of the request it sent: a long prompt is not held for the stream's length", async () => {
    const measuring = Bun.spawn([process.execPath, join(import.meta.dir, 'held-request-body.ts')], { stdout: 'pipe', stderr: 'inherit' })
    const [output, exitCode] = await Promise.all([new Response(measuring.stdout).text(), measuring.exited])
    expect(exitCode).toBe(0)
    const { size, held, heard } = JSON.parse(output)
    expect(heard).toBe('data: 1\n\n')
    expect(held).toBeLessThan(size / 4)
  }, 30_000)
})
