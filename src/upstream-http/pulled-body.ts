/**
 * A response body read by pulling straight from its socket: what the own client attaches to the
 * Responses it returns, so the stream relay reads an upstream with one promise per network
 * chunk and no ReadableStream machinery in between (dispatch/stream-sources.ts).
 *
 * A body is read either this way or through `response.body`, never both: the two share one
 * socket.
 */
export interface PulledBody {
  /** The next bytes of the body (a whole network chunk's worth), undefined at its end; throws when the upstream broke it or the request was aborted. */
  read(): Promise<Uint8Array | undefined>
  /** Stops reading: the socket is closed (a half-read body cannot be reused). */
  cancel(reason?: unknown): void
}

const PULLED_BODIES = new WeakMap<Response, PulledBody>()

/** Attaches a pulled body to the response whose `body` reads the same bytes. */
export function attachPulledBody(response: Response, body: PulledBody): Response {
  PULLED_BODIES.set(response, body)
  return response
}

/** The response's pulled body when the own client made it and nothing read `response.body` yet. */
export function pulledBodyOf(response: Response): PulledBody | undefined {
  const body = PULLED_BODIES.get(response)
  return body && !response.bodyUsed && !response.body?.locked ? body : undefined
}

/**
 * The pulled body as a ReadableStream, for every other reader (`response.text()`, a translated
 * stream's decoder): one chunk per pull, only when asked.
 */
export function readableOf(body: PulledBody): ReadableStream<Uint8Array> {
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
