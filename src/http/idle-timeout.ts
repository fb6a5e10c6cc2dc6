import { StreamIdleTimeoutError, UpstreamError } from '../errors/kinds'
import { concatBytes } from '../util/concat-bytes'

/**
 * The most a whole (non-streamed) upstream answer may take. A conversation's answer is some KB,
 * and an upstream that sends without end would otherwise grow the gateway's memory until it
 * dies; past this the upstream is stopped and the call fails as an upstream failure (502), not billed.
 */
export const MAX_WHOLE_ANSWER_BYTES = 64 * 2 ** 20

/**
 * The whole body of an upstream answer, each read under the silence deadline (the provider's
 * `streamIdleTimeoutMs`): it fails with StreamIdleTimeoutError when the source sends nothing
 * for `idleMs` while a read waits. Response headers only prove the upstream started: without
 * this, an upstream that sends one chunk and hangs would keep the connection and the hold until
 * some socket timeout cut it.
 *
 * On timeout, or past MAX_WHOLE_ANSWER_BYTES, `onIdle` runs first (it aborts the upstream request) and the source is cancelled;
 * the one timer of each read is cleared however the read ends. The body's own reader is read
 * directly: a stream wrapped around it for the clock, and a Response around that to parse it,
 * cost a whole answer more than its bytes (in promises, timers and stream objects per read).
 */
export async function readWithinSilence(source: ReadableStream<Uint8Array>, idleMs: number, onIdle: () => void): Promise<Uint8Array> {
  const reader = source.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined
    const silence = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StreamIdleTimeoutError(`The upstream stream sent nothing for ${idleMs} ms.`)), idleMs)
    })
    let next: Awaited<ReturnType<typeof reader.read>>
    try {
      next = await Promise.race([reader.read(), silence])
    } catch (error) {
      if (error instanceof StreamIdleTimeoutError) {
        onIdle()
        // The read still pending settles with the abort; nobody needs its answer.
        reader.cancel(error).catch(() => {})
      }
      throw error
    } finally {
      clearTimeout(timer)
    }
    if (next.done) break
    chunks.push(next.value)
    size += next.value.byteLength
    if (size > MAX_WHOLE_ANSWER_BYTES) {
      onIdle()
      reader.cancel().catch(() => {})
      throw new UpstreamError(`The upstream answer was larger than ${MAX_WHOLE_ANSWER_BYTES / 2 ** 20} MB.`)
    }
  }
  return concatBytes(chunks, size)
}
