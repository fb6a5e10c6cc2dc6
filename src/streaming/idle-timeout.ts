import { StreamIdleTimeoutError, UpstreamError } from '../errors/kinds'
import type { RawBody } from '../upstream-http/raw-body'
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
export async function readWithinSilence(body: RawBody, idleMs: number, onIdle: () => void): Promise<Uint8Array> {
  const clock = new SilenceClock(idleMs, body, onIdle)
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

/**
 * The silence deadline of one upstream body (readWithinSilence, and the stream sources of
 * dispatch/stream-sources.ts): measures how long the gateway has waited for the upstream, with
 * one timer that, when it fires, either finds the wait past `idleMs` (then the upstream is
 * aborted and the body cancelled with StreamIdleTimeoutError, which a pending read fails with)
 * or sets itself again for the rest of the time. A pulled body waits while a read is pending
 * (`timed`); a piped one from each chunk to the next (`waitFromNow`), except while its reader is
 * behind (`notWaiting`). Nothing runs while nothing waits. A class, not closures: a relay keeps
 * one per open stream, thousands at once.
 */
export class SilenceClock {
  private waitingSince = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private silence: StreamIdleTimeoutError | undefined
  private ended = false

  constructor(
    private readonly idleMs: number,
    private readonly body: RawBody,
    private readonly abortUpstream: () => void,
  ) {}

  get stopped(): boolean {
    return this.ended
  }

  /** Why the body was cancelled, once the upstream stayed silent too long. */
  get silenceError(): StreamIdleTimeoutError | undefined {
    return this.silence
  }

  /** The upstream owes the next bytes from now. */
  waitFromNow(): void {
    this.waitingSince = performance.now()
    if (!this.timer && !this.ended) this.timer = setTimeout(checkSilence, this.idleMs, this)
  }

  /** Nothing is asked of the upstream until the next `waitFromNow` (the reader is behind). */
  notWaiting(): void {
    this.waitingSince = 0
  }

  /** `read` under the deadline: it fails with StreamIdleTimeoutError when the upstream stayed silent (and stops the clock when it fails). */
  async timed<T>(read: Promise<T>): Promise<T> {
    this.waitFromNow()
    try {
      const result = await read
      if (this.silence) throw this.silence
      return result
    } catch (error) {
      this.stop()
      throw this.silence ?? error
    } finally {
      this.waitingSince = 0
    }
  }

  stop(): void {
    this.ended = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  /** The timer fired: the read waiting now has waited either too long, or less than that (the timer is set again). */
  check(): void {
    this.timer = undefined
    if (this.waitingSince === 0 || this.ended) return
    const waited = performance.now() - this.waitingSince
    if (waited < this.idleMs) {
      this.timer = setTimeout(checkSilence, this.idleMs - waited, this)
      return
    }
    this.silence = new StreamIdleTimeoutError(`The upstream stream sent nothing for ${this.idleMs} ms.`)
    this.abortUpstream()
    this.body.cancel(this.silence)
  }
}

function checkSilence(clock: SilenceClock): void {
  clock.check()
}
