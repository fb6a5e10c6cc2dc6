import { SilenceClock } from '../http/idle-timeout'
import { type FramedSseEvent, SseFramer } from '../http/sse'
import { type PulledBody, pulledBodyOf } from '../upstream-http/client'

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
 * An upstream answer's body as pulls: straight from the socket when the gateway's own client
 * made the response (upstream-http/), else through the body stream's reader (a response from
 * the global fetch, or a test's fake).
 */
export function upstreamBodyOf(response: Response): PulledBody {
  const pulled = pulledBodyOf(response)
  if (pulled) return pulled
  const reader = (response.body ?? new ReadableStream<Uint8Array>()).getReader()
  return {
    read: () => reader.read().then((next) => (next.done ? undefined : next.value)),
    cancel: (reason) => {
      reader.cancel(reason).catch(() => {})
    },
  }
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
export function sseSource(body: PulledBody, idleMs: number, abortUpstream: () => void): StreamSource<FramedSseEvent> {
  return new SseSource(body, idleMs, abortUpstream)
}

/** sseSource's reader: a class rather than closures, as one is kept per open stream. */
class SseSource implements StreamSource<FramedSseEvent> {
  private readonly decoder = new TextDecoder()
  private readonly framer = new SseFramer()
  private readonly clock: SilenceClock

  constructor(
    private readonly body: PulledBody,
    idleMs: number,
    private readonly abortUpstream: () => void,
  ) {
    this.clock = new SilenceClock(idleMs, body, abortUpstream)
  }

  async read(): Promise<FramedSseEvent[] | undefined> {
    if (this.clock.stopped) return undefined
    const chunk = await this.clock.timed(this.body.read())
    if (chunk === undefined) {
      this.clock.stop()
      return [...this.framer.push(this.decoder.decode()), ...this.framer.end()]
    }
    try {
      return this.framer.push(this.decoder.decode(chunk, { stream: true }))
    } catch (error) {
      this.clock.stop()
      this.abortUpstream()
      this.body.cancel(error)
      throw error
    }
  }

  close(): void {
    this.clock.stop()
  }
}

/**
 * The upstream body under the same silence deadline, for a translated route's decoder: like
 * http/idle-timeout.ts, but with one timer per stream rather than one per read.
 */
export function silenceWatched(body: PulledBody, idleMs: number, abortUpstream: () => void): ReadableStream<Uint8Array> {
  const clock = new SilenceClock(idleMs, body, abortUpstream)
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const chunk = await clock.timed(body.read())
          if (chunk === undefined) {
            clock.stop()
            controller.close()
          } else controller.enqueue(chunk)
        } catch (error) {
          controller.error(error)
        }
      },
      cancel(reason) {
        clock.stop()
        body.cancel(reason)
      },
    },
    // Read one chunk at a time, only when asked: the clock measures the upstream, not a queue.
    { highWaterMark: 0 },
  )
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
