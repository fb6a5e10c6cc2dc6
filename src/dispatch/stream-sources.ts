import { StreamIdleTimeoutError } from '../errors/kinds'
import { type FramedSseEvent, SseFramer } from '../http/sse'

/**
 * Where a relay (stream-relay.ts) reads from: a batch of items per read, as the upstream sent
 * them, so one network chunk holding many events costs one read and one write.
 */
export interface StreamSource<Item> {
  /** The next items (possibly none), or undefined at the upstream's end; throws when the upstream breaks. */
  read(): Promise<Item[] | undefined>
  /** The relay is done reading: whatever the source still watches (its silence clock) stops. */
  close(): void
}

/**
 * A native upstream's event stream, read straight from the response body: no stream in between,
 * one decode per network chunk, events framed in place (http/sse.ts, which also bounds their
 * size: an oversized event stops the upstream and fails the read).
 *
 * The silence deadline (the provider's `streamIdleTimeoutMs`, as http/idle-timeout.ts applies
 * to every other upstream read) runs only while a read is pending, so a client that reads slowly
 * never counts against the upstream. One timer per stream checks it rather than one per read:
 * a stream relays thousands of chunks and a timer each would cost more than the relay itself.
 * On timeout the upstream request is aborted and the pending read fails with
 * StreamIdleTimeoutError.
 */
export function sseSource(body: ReadableStream<Uint8Array>, idleMs: number, abortUpstream: () => void): StreamSource<FramedSseEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const framer = new SseFramer()
  let waitingSince = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let idle: StreamIdleTimeoutError | undefined
  let ended = false

  const check = () => {
    timer = undefined
    if (waitingSince === 0 || ended) return
    const waited = performance.now() - waitingSince
    if (waited < idleMs) {
      timer = setTimeout(check, idleMs - waited)
      return
    }
    idle = new StreamIdleTimeoutError(`The upstream stream sent nothing for ${idleMs} ms.`)
    abortUpstream()
    // The pending read ends with the cancel; it reports the silence.
    reader.cancel(idle).catch(() => {})
  }
  const stop = () => {
    ended = true
    if (timer) clearTimeout(timer)
    timer = undefined
  }

  return {
    async read() {
      if (ended) return undefined
      waitingSince = performance.now()
      if (!timer) timer = setTimeout(check, idleMs)
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (error) {
        stop()
        throw idle ?? error
      } finally {
        waitingSince = 0
      }
      if (idle) {
        stop()
        throw idle
      }
      if (next.done) {
        stop()
        return [...framer.push(decoder.decode()), ...framer.end()]
      }
      try {
        return framer.push(decoder.decode(next.value, { stream: true }))
      } catch (error) {
        // An event past the size bound: the upstream is stopped, nothing more is read.
        stop()
        abortUpstream()
        reader.cancel(error).catch(() => {})
        throw error
      }
    },
    close: stop,
  }
}

/** Items from an async iterable (a translated route's canonical parts), one per read. */
export function iterableSource<Item>(items: AsyncIterable<Item>): StreamSource<Item> {
  const iterator = items[Symbol.asyncIterator]()
  return {
    async read() {
      const next = await iterator.next()
      return next.done ? undefined : [next.value]
    },
    close: () => undefined,
  }
}
