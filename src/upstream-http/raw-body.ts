/**
 * A response body read straight from its socket: what the own client attaches to the Responses
 * it returns, so the stream relay reads an upstream with no ReadableStream machinery in between
 * (dispatch/stream-sources.ts). It is read one of two ways, never both:
 *
 * - pulled, one promise per network chunk (`read`), for a whole answer or a stream's decoder;
 * - pushed (`pipe`): each network chunk's body bytes handed to a sink as the socket delivers
 *   them, with no promise at all, which is how a relayed stream chunk costs what a bare proxy's
 *   does (measured: docs/operations.md#how-upstreams-are-reached). The sink's reader slows the
 *   upstream with `pause` and `resume`.
 *
 * A body is read either this way or through `response.body`, never both: the two share one
 * socket.
 */
export interface RawBody {
  /** The next bytes of the body (a whole network chunk's worth), undefined at its end; throws when the upstream broke it or the request was aborted. */
  read(): Promise<Uint8Array | undefined>
  /** Hands the body to `sink`, chunk by chunk as it arrives, then its end or its failure (once). */
  pipe(sink: BodySink): void
  /** Stops taking bytes from the upstream until `resume` (a piped body's reader is behind). */
  pause(): void
  resume(): void
  /** Stops reading: the socket is closed (a half-read body cannot be reused); a piped body's sink is told `reason`. */
  cancel(reason?: unknown): void
}

/** What a piped body feeds. Nothing is called after `end` or `fail`. */
export interface BodySink {
  bytes(chunk: Uint8Array): void
  end(): void
  fail(error: unknown): void
}

const RAW_BODIES = new WeakMap<Response, RawBody>()

/** Attaches a raw body to the response whose `body` reads the same bytes. */
export function attachRawBody(response: Response, body: RawBody): Response {
  RAW_BODIES.set(response, body)
  return response
}

/** The response's raw body when the own client made it and nothing read `response.body` yet. */
export function rawBodyOf(response: Response): RawBody | undefined {
  const body = RAW_BODIES.get(response)
  return body && !response.bodyUsed && !response.body?.locked ? body : undefined
}

/**
 * The raw body as a ReadableStream, for every other reader (`response.text()`, a translated
 * stream's decoder): one chunk per pull, only when asked.
 */
export function readableOf(body: RawBody): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunk = await body.read()
        if (chunk === undefined) controller.close()
        else controller.enqueue(chunk)
      },
      cancel: (reason) => body.cancel(reason),
    },
    { highWaterMark: 0 },
  )
}

/**
 * A raw body over a stream reader (the global fetch's body, a test's fake): pulled as the reader
 * reads, piped by a loop of reads that waits while paused.
 */
export function readerBody(reader: ReadableStreamDefaultReader<Uint8Array>): RawBody {
  return new ReaderBody(reader)
}

class ReaderBody implements RawBody {
  private sink: BodySink | undefined
  private stopped = false
  private resumed: (() => void) | undefined
  private paused: Promise<void> | undefined

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  read(): Promise<Uint8Array | undefined> {
    return this.reader.read().then((next) => (next.done ? undefined : next.value))
  }

  pipe(sink: BodySink): void {
    this.sink = sink
    this.pump(sink).catch((error) => this.stop(error))
  }

  pause(): void {
    this.paused ??= new Promise((resolve) => {
      this.resumed = resolve
    })
  }

  resume(): void {
    const resumed = this.resumed
    this.paused = undefined
    this.resumed = undefined
    resumed?.()
  }

  cancel(reason?: unknown): void {
    this.reader.cancel(reason).catch(() => {})
    this.stop(reason)
  }

  private async pump(sink: BodySink): Promise<void> {
    for (;;) {
      if (this.paused) await this.paused
      const next = await this.reader.read()
      if (this.stopped) return
      if (next.done) {
        this.stopped = true
        sink.end()
        return
      }
      sink.bytes(next.value)
    }
  }

  /** Ends a piped body with a failure, once (a cancel while a read waits, or a broken read). */
  private stop(error: unknown): void {
    if (this.stopped) return
    this.stopped = true
    this.resume()
    this.sink?.fail(error)
  }
}
