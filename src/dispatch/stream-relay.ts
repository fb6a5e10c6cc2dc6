import { estimateTextTokens } from '../billing/estimator'
import type { StreamPart } from '../canonical/answer'
import { estimatedUsage } from '../canonical/usage'
import type { GatewayError } from '../errors/gateway-error'
import { StreamIdleTimeoutError, UpstreamError } from '../errors/kinds'
import { CLIENT_CLOSED_STATUS } from '../observability/request-record'
import type { StreamTranslator } from '../providers/adapter'
import { type SseEvent, writeSseEvents } from '../streaming/sse'
import type { BilledCall, ServedBy } from './billed-call'
import type { RelaySink, StreamSource } from './stream-sources'
import type { ClosingStep, EventWriter, StreamEncoder, StreamedSoFar, StreamObserver, StreamStep } from './surface'

/** The call a relay settles, the route that served it, how to stop the upstream, and whether the client left. */
export interface RelayedCall {
  call: BilledCall
  servedBy: ServedBy
  abortUpstream: () => void
  clientSignal: AbortSignal
}

/** Bun's direct stream (type 'direct'), which the DOM typings of ReadableStream do not describe. */
const DirectStream = ReadableStream as unknown as new (source: Bun.DirectUnderlyingSource<Uint8Array>) => ReadableStream<Uint8Array>

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' }

/**
 * The one stream relay: the source feeds it what the upstream sends, the observer decides what
 * each item becomes, what one feed produced goes out as one write, and the books close exactly
 * once. A complete stream is settled from its usage and its closing events carry the cost; one
 * the client abandons is settled for what was generated; one that breaks ends with the surface's
 * failure events, released unbilled, and one that goes silent ends the same way, settled for
 * what was streamed.
 *
 * The body is a direct stream: its text goes straight into the response, with no queue of its
 * own, which is what keeps a relayed chunk near the cost of a bare proxy. A write the client's
 * connection cannot take yet is handed back to the source as a promise, and the source feeds
 * nothing more (it pauses the upstream) until it settles, so the upstream's silence clock never
 * runs for a slow client.
 */
export function relayStream<Item>(source: StreamSource<Item>, observer: StreamObserver<Item>, relayed: RelayedCall): Response {
  // The request ends with the stream's last byte, not with its headers.
  relayed.call.record.streamOpened()
  const relay = new Relay(source, observer, relayed)
  return new Response(
    new DirectStream({
      type: 'direct',
      // Called once by the server (again by an in-process reader after each read): the source is started once.
      pull: (controller) => relay.start(controller),
      cancel: () => relay.cancel(),
    }),
    { headers: SSE_HEADERS },
  )
}

/** relayStream's state: a class rather than closures, as one is kept per open stream. */
class Relay<Item> implements RelaySink<Item>, EventWriter {
  private controller: ReadableStreamDirectController | undefined
  /** The client's connection is full after the last write of an event relayed as bytes. */
  private full: Promise<number> | undefined
  /** The relay stopped taking items: it is finishing, finished, or the client left. */
  private stopped = false
  private cancelled = false
  private recorded = false

  constructor(
    private readonly source: StreamSource<Item>,
    private readonly observer: StreamObserver<Item>,
    private readonly relayed: RelayedCall,
  ) {}

  start(controller: ReadableStreamDirectController): void {
    if (this.controller) return
    this.controller = controller
    this.source.start(this)
  }

  items(items: Item[]): Promise<unknown> | undefined {
    const controller = this.controller
    if (this.stopped || !controller) return undefined
    let text = ''
    for (const item of items) {
      const step = this.observed(() => this.observer.step(item))
      if (step.kind !== 'write') {
        this.finishWith(step, text)
        return undefined
      }
      text += step.text
    }
    if (text === '') return undefined
    // The server sends what was written at the end of the tick; a promise means its buffer is full.
    let written: number | Promise<number>
    try {
      written = controller.write(text)
    } catch {
      // The client's connection is gone and the server has not said so yet: the client left.
      void this.cancel()
      return undefined
    }
    return typeof written === 'number' ? undefined : written
  }

  eventBytes(event: Uint8Array): Promise<unknown> | undefined | false {
    const { observer, controller } = this
    if (this.stopped || !controller || !observer.relayEventBytes) return false
    this.full = undefined
    try {
      if (!observer.relayEventBytes(event, this)) return false
    } catch {
      // The client's connection is gone and the server has not said so yet: the client left.
      void this.cancel()
      return undefined
    }
    return this.full
  }

  /** A part of an event relayed as bytes (the observer's writer); a write the connection cannot take yet is waited for. */
  write(part: Uint8Array | string): void {
    const written = this.controller?.write(part)
    if (written !== undefined && typeof written !== 'number') this.full = written
  }

  end(): void {
    if (!this.stopped)
      this.finishWith(
        this.observed(() => this.observer.end()),
        '',
      )
  }

  /** The observer's step; what it throws (usage it cannot read, an event its translator refuses) fails the stream. */
  private observed<Step extends StreamStep>(step: () => Step): Step | Extract<ClosingStep, { kind: 'fail' }> {
    try {
      return step()
    } catch (cause) {
      return { kind: 'fail', cause }
    }
  }

  fail(cause: unknown): void {
    if (this.stopped) return
    // The client left and its signal stopped the upstream before the server told the stream: its cancel.
    if (this.relayed.clientSignal.aborted) void this.cancel()
    else this.finishWith({ kind: 'fail', cause }, '')
  }

  /** The client went away: the upstream is stopped and what was generated is billed. */
  async cancel(): Promise<void> {
    if (this.cancelled) return
    this.cancelled = true
    const finishing = this.stopped
    this.stop()
    this.relayed.abortUpstream()
    // A stream already finishing closes its own books (and records the client's leaving).
    if (finishing) return
    const { usage, source } = this.observer.soFar()
    await this.relayed.call.settle(this.relayed.servedBy, usage, source)
    this.record(CLIENT_CLOSED_STATUS, 'client_closed')
  }

  private stop(): void {
    this.stopped = true
    this.source.close()
  }

  private finishWith(step: ClosingStep, before: string): void {
    this.stop()
    this.finish(step, before).catch((error) => {
      if (!this.cancelled) this.controller?.close(error instanceof Error ? error : new Error(String(error)))
    })
  }

  /** Carries out the step that ends the stream, after the text the same feed produced before it. */
  private async finish(step: ClosingStep, before: string): Promise<void> {
    const { call, servedBy } = this.relayed
    await this.writeText(before)
    switch (step.kind) {
      case 'settle': {
        const settled = await call.settle(servedBy, step.soFar.usage, step.soFar.source)
        await this.writeText(step.closing(settled.cost))
        break
      }
      case 'release':
        await call.release()
        await this.writeText(step.text)
        break
      case 'fail': {
        const failure = await closeUnfinished(call, servedBy, step.cause, this.observer)
        call.record.answeredError(failure.code)
        await this.writeText(this.observer.failure(failure))
        break
      }
    }
    if (this.cancelled) this.record(CLIENT_CLOSED_STATUS, 'client_closed')
    else {
      this.controller?.close()
      this.record(200, step.kind === 'settle' ? 'ok' : 'upstream_error')
    }
  }

  private async writeText(text: string): Promise<void> {
    if (text === '' || this.cancelled || !this.controller) return
    const written = this.controller.write(text)
    if (typeof written !== 'number') await written
  }

  private record(status: number, outcome: Parameters<BilledCall['record']['finish']>[1]): void {
    if (this.recorded) return
    this.recorded = true
    this.relayed.call.record.finish(status, outcome)
  }
}

/**
 * Closes the books of a stream that stopped before its end and returns the error its client is
 * told. A stream the gateway stopped for silence (streaming/idle-timeout.ts) is settled for what was
 * streamed, like one the client abandons: the upstream worked until then. A stream the upstream
 * broke is an upstream failure, released unbilled.
 */
async function closeUnfinished(call: BilledCall, servedBy: ServedBy, cause: unknown, observer: StreamObserver<unknown>): Promise<GatewayError> {
  if (cause instanceof StreamIdleTimeoutError) {
    const { usage, source } = observer.soFar()
    await call.settle(servedBy, usage, source)
    return cause
  }
  await call.release()
  return new UpstreamError('The upstream stream failed before it completed.', { cause })
}

/**
 * A translated route's events: its translator (providers/<api>/convert-stream.ts) makes
 * canonical parts of each, the surface's encoder writes them. Billing reads only the `finish`
 * part; until it comes, the gateway counts what it relayed. What the translator throws (an
 * error event, something malformed, an end before the finish) fails the stream (the relay's
 * `observed`).
 */
export function observeTranslated(translator: StreamTranslator, encoder: StreamEncoder, inputTokens: number): StreamObserver<SseEvent> {
  let outputTokens = 0
  const soFar = (): StreamedSoFar => ({ usage: estimatedUsage(inputTokens, outputTokens), source: 'estimate' })
  /** The parts' text up to a finish, or the step that ends the stream after that text. */
  const steps = (parts: StreamPart[]): StreamStep => {
    let text = ''
    for (const part of parts) {
      if (part.type === 'finish') {
        const usage = part.usage ?? soFar().usage
        const before = text
        return {
          kind: 'settle',
          soFar: { usage, source: part.usage ? 'provider' : 'estimate' },
          closing: (cost) => before + writeSseEvents(encoder.finish(part, usage, cost)),
        }
      }
      if (part.type === 'text-delta' || part.type === 'reasoning-delta') outputTokens += estimateTextTokens(part.text)
      if (part.type === 'tool-call-delta') outputTokens += estimateTextTokens(part.argumentsDelta)
      text += writeSseEvents(encoder.encode(part))
    }
    return { kind: 'write', text }
  }
  return {
    step: (event) => steps(translator.event(event)),
    end(): ClosingStep {
      const step = steps(translator.end())
      // A translator that ends without a finish part and without throwing has nothing to bill from.
      return step.kind === 'write' ? { kind: 'fail', cause: new Error('the upstream stream ended before it finished') } : step
    },
    soFar,
    failure: (error) => writeSseEvents(encoder.failure(error)),
  }
}
