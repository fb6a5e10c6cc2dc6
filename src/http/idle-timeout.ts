import { StreamIdleTimeoutError, UpstreamError } from '../errors/kinds'
import type { PulledBody } from '../upstream-http/pulled-body'
import { concatBytes } from '../util/concat-bytes'

/**
 * The most a whole (non-streamed) upstream answer may take. A conversation's answer is some KB,
 * and an upstream that sends without end would otherwise grow the gateway's memory until it
 * dies; past this the upstream is stopped and the call fails as an upstream failure (502), not billed.
 */
export const MAX_WHOLE_ANSWER_BYTES = 64 * 2 ** 20

/**
 * The whole body of an upstream answer, read under the silence deadline (the provider's
 * `streamIdleTimeoutMs`): it fails with StreamIdleTimeoutError when the upstream sends nothing
 * for `idleMs` while a read waits. Response headers only prove the upstream started: without
 * this, an upstream that sends one chunk and hangs would keep the connection and the hold until
 * some socket timeout cut it.
 *
 * On timeout, or past MAX_WHOLE_ANSWER_BYTES, `onIdle` runs first (it aborts the upstream
 * request) and the body is cancelled. The body is pulled straight from the socket when the
 * gateway's own client made it (dispatch/stream-sources.ts, upstreamBodyOf), under one timer for
 * the whole read: a stream, a timer and a race per read would cost a small answer more than its
 * bytes.
 */
export async function readWithinSilence(body: PulledBody, idleMs: number, onIdle: () => void): Promise<Uint8Array> {
  const clock = silenceClock(idleMs, (silence) => {
    onIdle()
    body.cancel(silence)
  })
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const chunk = await clock.timed(body.read())
    if (chunk === undefined) break
    chunks.push(chunk)
    size += chunk.byteLength
    if (size > MAX_WHOLE_ANSWER_BYTES) {
      clock.stop()
      onIdle()
      body.cancel()
      throw new UpstreamError(`The upstream answer was larger than ${MAX_WHOLE_ANSWER_BYTES / 2 ** 20} MB.`)
    }
  }
  clock.stop()
  return concatBytes(chunks, size)
}

interface SilenceClock {
  /** `read` under the deadline: it fails with StreamIdleTimeoutError when the upstream stayed silent (and stops the clock when it fails). */
  timed<T>(read: Promise<T>): Promise<T>
  stop(): void
  readonly stopped: boolean
}

/**
 * The silence deadline of one upstream body (readWithinSilence, and the stream sources of
 * dispatch/stream-sources.ts): measures how long each read waits, with one timer that, when it
 * fires, either finds the read waiting past `idleMs` (then `onSilence` runs and the read fails)
 * or sets itself again for the rest of the time. Nothing runs while no read is pending.
 */
export function silenceClock(idleMs: number, onSilence: (silence: StreamIdleTimeoutError) => void): SilenceClock {
  let waitingSince = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let silence: StreamIdleTimeoutError | undefined
  let stopped = false
  const check = () => {
    timer = undefined
    if (waitingSince === 0 || stopped) return
    const waited = performance.now() - waitingSince
    if (waited < idleMs) {
      timer = setTimeout(check, idleMs - waited)
      return
    }
    silence = new StreamIdleTimeoutError(`The upstream stream sent nothing for ${idleMs} ms.`)
    onSilence(silence)
  }
  const stop = () => {
    stopped = true
    if (timer) clearTimeout(timer)
    timer = undefined
  }
  return {
    async timed(read) {
      waitingSince = performance.now()
      if (!timer) timer = setTimeout(check, idleMs)
      try {
        const result = await read
        if (silence) throw silence
        return result
      } catch (error) {
        stop()
        throw silence ?? error
      } finally {
        waitingSince = 0
      }
    },
    stop,
    get stopped() {
      return stopped
    },
  }
}
