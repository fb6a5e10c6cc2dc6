import { expect, test } from 'bun:test'
import { upstreamBodyOf } from '../../src/dispatch/stream-sources'
import { StreamIdleTimeoutError, UpstreamError } from '../../src/errors/kinds'
import { MAX_WHOLE_ANSWER_BYTES, readWithinSilence as readBody } from '../../src/streaming/idle-timeout'

/** The answer's body as the dispatcher hands it over: pulled from a fetch-made Response's stream. */
const readWithinSilence = (stream: ReadableStream<Uint8Array>, idleMs: number, onIdle: () => void) =>
  readBody(upstreamBodyOf(new Response(stream)), idleMs, onIdle)

const bytes = (text: string) => new TextEncoder().encode(text)
const text = (value: Uint8Array) => new TextDecoder().decode(value)

/** A source that sends `chunks` (each `gapMs` after the one before) and then, unless told to close, stays silent; it records a cancel. */
function source(chunks: string[], close: boolean, gapMs = 0) {
  const state = { cancelled: false }
  let sent = 0
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (sent < chunks.length) {
          if (gapMs > 0) await Bun.sleep(gapMs)
          controller.enqueue(bytes(chunks[sent++] ?? ''))
        } else if (close) controller.close()
        else await new Promise(() => {})
      },
      cancel() {
        state.cancelled = true
      },
    },
    { highWaterMark: 0 },
  )
  return { stream, state }
}

test('a body that finishes is read whole, and no timer is left to fire', async () => {
  let idle = 0
  const { stream } = source(['a', 'bc', 'd'], true)
  expect(text(await readWithinSilence(stream, 50, () => idle++))).toBe('abcd')
  await Bun.sleep(120)
  expect(idle).toBe(0)
})

test('silence past the limit fails the read with upstream_timeout, calls onIdle once and cancels the source', async () => {
  let idle = 0
  const { stream, state } = source(['a'], false)
  const started = Date.now()
  const failure = await readWithinSilence(stream, 50, () => idle++).catch((error: unknown) => error)
  expect(Date.now() - started).toBeGreaterThanOrEqual(45)
  expect(failure).toBeInstanceOf(StreamIdleTimeoutError)
  expect((failure as StreamIdleTimeoutError).code).toBe('upstream_timeout')
  expect(idle).toBe(1)
  expect(state.cancelled).toBe(true)
  await Bun.sleep(120)
  expect(idle).toBe(1)
})

test('the clock is per read: a body slower in all than the limit, but never silent that long, is read whole', async () => {
  let idle = 0
  const { stream } = source(['a', 'b', 'c', 'd'], true, 25)
  const started = Date.now()
  expect(text(await readWithinSilence(stream, 60, () => idle++))).toBe('abcd')
  expect(Date.now() - started).toBeGreaterThan(60)
  expect(idle).toBe(0)
})

test('errors of the source pass through as they are', async () => {
  const broken = new Error('connection reset')
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.error(broken)
    },
  })
  let idle = 0
  const failure = await readWithinSilence(stream, 50, () => idle++).catch((error: unknown) => error)
  expect(failure).toBe(broken)
  await Bun.sleep(100)
  expect(idle).toBe(0)
})

test('an answer past the size bound stops the upstream and fails as an upstream error, however fast it comes', async () => {
  const chunk = new Uint8Array(2 ** 20)
  let sent = 0
  let cancelled = false
  const endless = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        sent++
        controller.enqueue(chunk)
      },
      cancel() {
        cancelled = true
      },
    },
    { highWaterMark: 0 },
  )
  let aborted = false
  const error = await readWithinSilence(endless, 5_000, () => {
    aborted = true
  }).catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(UpstreamError)
  expect((error as Error).message).toContain(`${MAX_WHOLE_ANSWER_BYTES / 2 ** 20} MB`)
  expect(aborted).toBe(true)
  expect(cancelled).toBe(true)
  // It stopped reading at the bound, not at the end of a stream that has none.
  expect(sent).toBeLessThanOrEqual(MAX_WHOLE_ANSWER_BYTES / 2 ** 20 + 2)
})
