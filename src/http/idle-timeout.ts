import { StreamIdleTimeoutError } from '../errors/kinds'

/**
 * A body stream that fails with StreamIdleTimeoutError when its source stays silent for
 * `idleMs` while a reader waits on it (the provider's `streamIdleTimeoutMs`). Response
 * headers only prove the upstream started: without this, an upstream that sends one chunk and
 * hangs would keep the connection and the hold until some socket timeout cut it.
 *
 * The clock runs only while a read is pending, so a client that reads slowly never counts
 * against the upstream. On timeout `onIdle` runs first (it aborts the upstream request) and the
 * source is cancelled; the one timer of each read is cleared however the read ends.
 */
export function watchIdle(source: ReadableStream<Uint8Array>, idleMs: number, onIdle: () => void): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let timer: ReturnType<typeof setTimeout> | undefined
        const silence = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new StreamIdleTimeoutError(`The upstream stream sent nothing for ${idleMs} ms.`)), idleMs)
        })
        try {
          const next = await Promise.race([reader.read(), silence])
          if (next.done) controller.close()
          else controller.enqueue(next.value)
        } catch (error) {
          if (error instanceof StreamIdleTimeoutError) {
            onIdle()
            // The read still pending settles with the abort; nobody needs its answer.
            reader.cancel(error).catch(() => {})
          }
          controller.error(error)
        } finally {
          clearTimeout(timer)
        }
      },
      cancel(reason) {
        return reader.cancel(reason)
      },
    },
    // Read one chunk at a time, only when asked: the clock measures the upstream, not a queue.
    { highWaterMark: 0 },
  )
}
