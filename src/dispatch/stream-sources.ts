import { SilenceClock } from '../streaming/idle-timeout'
import { type FramedSseEvent, SseFramer } from '../streaming/sse'
import { type BodySink, type RawBody, rawBodyOf, readerBody } from '../upstream-http/client'

/**
 * What a relay (stream-relay.ts) reads from: the source feeds it as the upstream sends, a batch
 * of items at a time, so one network chunk holding many events costs one write. It is pushed,
 * not pulled: a chunk relayed from a socket costs no promise.
 */
export interface StreamSource<Item> {
  /** Starts feeding `sink`; called once. */
  start(sink: RelaySink<Item>): void
  /** The relay is done reading: the source stops feeding it and whatever it still watches (its silence clock). */
  close(): void
}

/** The relay's side of a source. Nothing is called after `end` or `fail`. */
export interface RelaySink<Item> {
  /** What the upstream sent next; a promise while the client's connection is full: feed nothing more until it settles. */
  items(items: Item[]): Promise<unknown> | undefined
  /**
   * One whole event's bytes, offered before they are read as text: false when the relay does not
   * take them as they are (the source then reads them and feeds the item), else as `items`.
   */
  eventBytes(event: Uint8Array): Promise<unknown> | undefined | false
  /** The upstream ended. */
  end(): void
  /** The upstream broke, went silent, or sent what cannot be relayed. */
  fail(cause: unknown): void
}

/**
 * An upstream answer's body, straight from the socket when the gateway's own client made the
 * response (upstream-http/), else through the body stream's reader (a response from the global
 * fetch, or a test's fake).
 */
export function upstreamBodyOf(response: Response): RawBody {
  return rawBodyOf(response) ?? readerBody((response.body ?? new ReadableStream<Uint8Array>()).getReader())
}

/**
 * A native upstream's event stream, piped from the response body: no stream in between, one
 * decode per network chunk, events framed in place (streaming/sse.ts, which also bounds their size:
 * an oversized event stops the upstream and fails the relay).
 *
 * The silence deadline (the provider's `streamIdleTimeoutMs`, as streaming/idle-timeout.ts applies
 * to every other upstream read) runs only while the relay waits for the upstream, never while
 * the client's connection is full, so a client that reads slowly never counts against the
 * upstream. One timer per stream checks it rather than one per chunk: a stream relays thousands
 * of chunks and a timer each would cost more than the relay itself. On timeout the upstream
 * request is aborted and the relay fails with StreamIdleTimeoutError.
 */
export function sseSource(body: RawBody, idleMs: number, abortUpstream: () => void): StreamSource<FramedSseEvent> {
  return new SseSource(body, idleMs, abortUpstream)
}

/** sseSource's feed: a class rather than closures, as one is kept per open stream. */
class SseSource implements StreamSource<FramedSseEvent>, BodySink {
  /**
   * Made when a chunk ends inside an event, whose last character may be cut: until then, whole
   * chunks are decoded by the shared decoder (a decoder each is most of a KB per open stream).
   */
  private decoder: TextDecoder | undefined
  private decodedAny = false
  private readonly framer = new SseFramer()
  private readonly clock: SilenceClock
  private sink: RelaySink<FramedSseEvent> | undefined
  /** The body has neither ended nor failed. */
  private bodyOpen = true
  /**
   * The text so far ended with an event's blank line (LF LF): neither the decoder nor the framer
   * holds a part of anything, so a chunk that is one whole event can be offered as bytes.
   */
  private betweenEvents = true

  constructor(
    private readonly body: RawBody,
    idleMs: number,
    private readonly abortUpstream: () => void,
  ) {
    this.clock = new SilenceClock(idleMs, body, abortUpstream)
  }

  start(sink: RelaySink<FramedSseEvent>): void {
    this.sink = sink
    this.clock.waitFromNow()
    this.body.pipe(this)
  }

  close(): void {
    this.sink = undefined
    // The relay may finish before the body does (a stream's last event came, its body has not
    // ended): the upstream then has one silence period more to end it, then its connection is
    // closed (the clock's timeout), never left open for as long as the upstream likes.
    if (this.bodyOpen) this.clock.waitFromNow()
    else this.clock.stop()
  }

  bytes(chunk: Uint8Array): void {
    if (!this.sink) return
    this.clock.waitFromNow()
    const wasBetween = this.betweenEvents
    this.betweenEvents = endsEvent(chunk)
    if (wasBetween && this.betweenEvents) {
      const taken = this.sink.eventBytes(chunk)
      if (taken !== false) {
        if (taken) this.waitFor(taken)
        return
      }
    }
    let events: FramedSseEvent[]
    try {
      events = this.framer.push(this.decoded(chunk, wasBetween))
    } catch (error) {
      this.abortUpstream()
      // The body tells this source (fail) that it was cancelled, and the relay hears why.
      this.body.cancel(error)
      return
    }
    if (events.length === 0) return
    const full = this.sink.items(events)
    if (full) this.waitFor(full)
  }

  end(): void {
    this.bodyOpen = false
    const sink = this.sink
    this.close()
    if (!sink) return
    let rest: FramedSseEvent[]
    try {
      rest = [...this.framer.push(this.decoder?.decode() ?? ''), ...this.framer.end()]
    } catch (error) {
      sink.fail(error)
      return
    }
    if (rest.length > 0) sink.items(rest)
    sink.end()
  }

  fail(error: unknown): void {
    this.bodyOpen = false
    const sink = this.sink
    const silence = this.clock.silenceError
    this.close()
    sink?.fail(silence ?? error)
  }

  /** The chunk's text: a chunk that starts and ends between events holds whole characters only. */
  private decoded(chunk: Uint8Array, startsBetween: boolean): string {
    // A byte order mark is dropped at the start of the stream only, as one decoder for the whole stream would.
    const first = !this.decodedAny
    this.decodedAny = true
    if (startsBetween && this.betweenEvents && !this.decoder) return (first ? WHOLE_TEXT : WHOLE_TEXT_MIDSTREAM).decode(chunk)
    this.decoder ??= first ? new TextDecoder() : new TextDecoder('utf-8', { ignoreBOM: true })
    return this.decoder.decode(chunk, DECODE_STREAMING)
  }

  /** The client's connection is full: the upstream is paused, and its silence not counted, until it drains. */
  private waitFor(full: Promise<unknown>): void {
    this.body.pause()
    this.clock.notWaiting()
    full.then(
      () => this.resume(),
      () => this.resume(),
    )
  }

  private resume(): void {
    if (!this.sink) return
    this.body.resume()
    this.clock.waitFromNow()
  }
}

const DECODE_STREAMING = { stream: true }
/** Decode chunks that hold whole characters, for every stream: they keep no state between calls. */
const WHOLE_TEXT = new TextDecoder()
const WHOLE_TEXT_MIDSTREAM = new TextDecoder('utf-8', { ignoreBOM: true })
const LF = 10

/** The chunk ends with a blank line (LF LF): whatever event it finishes is whole. */
function endsEvent(chunk: Uint8Array): boolean {
  return chunk[chunk.length - 1] === LF && chunk[chunk.length - 2] === LF
}
