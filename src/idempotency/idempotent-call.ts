import type { CallIdentity, Claim, IdempotentCalls, KeptAnswer } from './idempotent-calls'
import { MAX_KEPT_ANSWER_BYTES } from './idempotent-calls'

/** What an idempotent call needs of its request: what it is, who it is, and whether the client is still there. */
export interface IdempotentRequest {
  identity: CallIdentity
  fingerprint: string
  requestId: string
  /** Aborts when the client goes away: the call goes on, its answer is read to the end and kept. */
  clientSignal: AbortSignal
}

/** The header a replayed answer carries. */
export const REPLAYED_HEADER = 'idempotent-replayed'

/**
 * Runs a billable call under its `Idempotency-Key` (docs/api.md#idempotent-retries): the first
 * request claims the key and runs the call with a signal the client cannot abort; a 2xx answer
 * is passed to the client as it comes and kept, byte for byte, before its last byte goes out;
 * anything else (an error thrown or a non-2xx answer) frees the key. A later request with the
 * same key gets the kept answer (no hold, no charge), 409 while the first runs, or 422.
 */
export async function idempotentCall(calls: IdempotentCalls, request: IdempotentRequest, run: (signal: AbortSignal) => Promise<Response>): Promise<Response> {
  const outcome = await calls.claim(request.identity, request.fingerprint, request.requestId)
  if (outcome.kind === 'replay') return replayOf(outcome.answer, outcome.requestId)
  const { claim } = outcome
  let response: Response
  try {
    // A signal of its own per call: the dispatcher leaves its listener on it while a stream runs.
    response = await run(new AbortController().signal)
  } catch (error) {
    await claim.free()
    throw error
  }
  if (!response.ok) {
    await claim.free()
    return response
  }
  return keptWhileSent(response, claim, request.clientSignal)
}

/** The kept answer as it was first sent, marked as a replay and under the first request's id. */
function replayOf(answer: KeptAnswer, requestId: string): Response {
  const headers: Record<string, string> = { [REPLAYED_HEADER]: 'true', 'x-request-id': requestId }
  if (answer.contentType !== null) headers['content-type'] = answer.contentType
  if (answer.contentType?.startsWith('text/event-stream')) headers['cache-control'] = 'no-cache'
  return new Response(new Uint8Array(answer.body), { status: answer.status, headers })
}

/**
 * The answer passed through to the client at the client's pace, each chunk also recorded. When
 * the client leaves (its signal, or its stream cancelled), the rest is read without it, so the
 * call still ends, is settled and kept. The client's last byte waits for the answer to be kept:
 * a retry after it always finds the replay.
 */
function keptWhileSent(response: Response, claim: Claim, clientSignal: AbortSignal): Response {
  const source = response.body
  const recorder = new AnswerRecorder(response.status, response.headers.get('content-type'), claim)
  if (source === null) {
    void recorder.finish()
    return response
  }
  const reader = source.getReader()
  const drain = () => void recorder.drain(reader)
  if (clientSignal.aborted) drain()
  else clientSignal.addEventListener('abort', drain, { once: true })
  const body = new ReadableStream<Uint8Array>(
    {
      pull: (controller) => recorder.pull(reader, controller),
      cancel: drain,
    },
    { highWaterMark: 0 },
  )
  return new Response(body, { status: response.status, headers: response.headers })
}

/** One answer's bytes as they pass, bounded by MAX_KEPT_ANSWER_BYTES, kept once at its end. */
class AnswerRecorder {
  private readonly chunks: Uint8Array[] = []
  private size = 0
  private tooLarge = false
  private draining = false

  constructor(
    private readonly status: number,
    private readonly contentType: string | null,
    private readonly claim: Claim,
  ) {}

  async pull(reader: ReadableStreamDefaultReader<Uint8Array>, controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    if (this.draining) return
    let read: Awaited<ReturnType<typeof reader.read>>
    try {
      read = await reader.read()
    } catch (error) {
      await this.claim.keep('unkept')
      controller.error(error)
      return
    }
    if (read.done) {
      await this.finish()
      if (!this.draining) controller.close()
      return
    }
    this.record(read.value)
    if (!this.draining) controller.enqueue(read.value)
  }

  /** The client left: the rest of the answer is read without it, then kept. */
  async drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    if (this.draining) return
    this.draining = true
    try {
      for (;;) {
        const read = await reader.read()
        if (read.done) break
        this.record(read.value)
      }
    } catch {
      // The answer broke before its end: whatever it cost was billed, it cannot be replayed whole.
      await this.claim.keep('unkept')
      return
    }
    await this.finish()
  }

  /** Keeps the answer (once: the claim ignores a second close). */
  finish(): Promise<void> {
    if (this.tooLarge) return this.claim.keep('unkept')
    return this.claim.keep({ status: this.status, contentType: this.contentType, body: Buffer.concat(this.chunks) })
  }

  private record(chunk: Uint8Array): void {
    if (this.tooLarge) return
    this.size += chunk.byteLength
    if (this.size > MAX_KEPT_ANSWER_BYTES) {
      this.tooLarge = true
      this.chunks.length = 0
      return
    }
    this.chunks.push(chunk)
  }
}
