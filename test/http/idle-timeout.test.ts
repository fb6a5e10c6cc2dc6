import { expect, test } from 'bun:test'
import { StreamIdleTimeoutError } from '../../src/errors/kinds'
import { watchIdle } from '../../src/http/idle-timeout'

const bytes = (text: string) => new TextEncoder().encode(text)

/** A source that sends `chunks` and then, unless told to close, stays silent; it records a cancel. */
function source(chunks: string[], close: boolean) {
  const state = { cancelled: false }
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(bytes(chunk))
      if (close) controller.close()
    },
    cancel() {
      state.cancelled = true
    },
  })
  return { stream, state }
}

test('a stream that finishes passes through, and no timer is left to fire', async () => {
  let idle = 0
  const { stream } = source(['a', 'b'], true)
  const text = await new Response(watchIdle(stream, 50, () => idle++)).text()
  expect(text).toBe('ab')
  await Bun.sleep(120)
  expect(idle).toBe(0)
})

test('silence past the limit fails the stream with upstream_timeout, calls onIdle once and cancels the source', async () => {
  let idle = 0
  const { stream, state } = source(['a'], false)
  const reader = watchIdle(stream, 50, () => idle++).getReader()
  expect(new TextDecoder().decode((await reader.read()).value)).toBe('a')
  const started = Date.now()
  const failure = await reader.read().catch((error: unknown) => error)
  expect(Date.now() - started).toBeGreaterThanOrEqual(45)
  expect(failure).toBeInstanceOf(StreamIdleTimeoutError)
  expect((failure as StreamIdleTimeoutError).code).toBe('upstream_timeout')
  expect(idle).toBe(1)
  expect(state.cancelled).toBe(true)
})

test('a slow reader does not count against the upstream: the clock runs only while a read waits', async () => {
  let idle = 0
  const { stream } = source(['a', 'b'], true)
  const reader = watchIdle(stream, 50, () => idle++).getReader()
  await reader.read()
  await Bun.sleep(150)
  expect(new TextDecoder().decode((await reader.read()).value)).toBe('b')
  expect((await reader.read()).done).toBe(true)
  expect(idle).toBe(0)
})

test('a consumer that cancels cancels the source; the idle clock stops with it', async () => {
  let idle = 0
  const { stream, state } = source(['a'], false)
  const watched = watchIdle(stream, 50, () => idle++)
  const reader = watched.getReader()
  await reader.read()
  await reader.cancel('client left')
  expect(state.cancelled).toBe(true)
  await Bun.sleep(120)
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
  const failure = await new Response(watchIdle(stream, 50, () => idle++)).text().catch((error: unknown) => error)
  expect(failure).toBe(broken)
  await Bun.sleep(100)
  expect(idle).toBe(0)
})

test('a consumer that cancels while a read waits: the read ends, nothing fires later', async () => {
  let idle = 0
  const { stream, state } = source([], false)
  const reader = watchIdle(stream, 50, () => idle++).getReader()
  const pending = reader.read()
  await Bun.sleep(10)
  await reader.cancel('client left')
  expect(await pending).toEqual({ done: true, value: undefined })
  expect(state.cancelled).toBe(true)
  await Bun.sleep(120)
  expect(idle).toBe(0)
})
