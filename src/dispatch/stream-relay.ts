import { estimateTextTokens } from '../billing/estimator'
import type { StreamPart } from '../canonical/answer'
import { type Usage, usageOf } from '../canonical/usage'
import type { GatewayError } from '../errors/gateway-error'
import { StreamIdleTimeoutError, UpstreamError } from '../errors/kinds'
import { writeSseEvents } from '../http/sse'
import { CLIENT_CLOSED_STATUS } from '../observability/request-record'
import type { BilledCall, ServedBy } from './billed-call'
import type { StreamSource } from './stream-sources'
import type { ClosingStep, StreamedSoFar, StreamEncoder, StreamObserver } from './surface'

/** The call a relay settles, the route that served it, and how to stop the upstream. */
export interface RelayedCall {
  call: BilledCall
  servedBy: ServedBy
  abortUpstream: () => void
}

/** Bun's direct stream (type 'direct'), which the DOM typings of ReadableStream do not describe. */
const DirectStream = ReadableStream as unknown as new (source: Bun.DirectUnderlyingSource<Uint8Array>) => ReadableStream<Uint8Array>

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' }

/**
 * The one stream relay: reads the upstream, lets the observer decide what each item becomes,
 * writes what one read produced as one write, and closes the books exactly once. A complete
 * stream is settled from its usage and its closing events carry the cost; one the client
 * abandons is settled for what was generated; one that breaks ends with the surface's failure
 * events, released unbilled, and one that goes silent ends the same way, settled for what was
 * streamed.
 *
 * The body is a direct stream: its text goes straight into the response, with no queue of its
 * own, which is what keeps a relayed chunk near the cost of a bare proxy. Its one loop reads
 * the upstream only while the client's connection takes what it writes (a write the connection
 * cannot take yet is awaited), so the upstream's silence clock never runs for a slow client.
 */
export function relayStream<Item>(source: StreamSource<Item>, observer: StreamObserver<Item>, relayed: RelayedCall): Response {
  const { call, servedBy } = relayed
  // The request ends with the stream's last byte, not with its headers.
  call.record.streamOpened()
  let started = false
  let cancelled = false
  let recorded = false
  const record = (status: number, outcome: Parameters<typeof call.record.finish>[1]) => {
    if (recorded) return
    recorded = true
    call.record.finish(status, outcome)
  }

  const write = async (controller: ReadableStreamDirectController, text: string) => {
    if (text === '' || cancelled) return
    // The server sends what was written at the end of the tick; a promise means its buffer is full.
    const written = controller.write(text)
    if (typeof written !== 'number') await written
  }
  /** Carries out the step that ends the stream, after the text the same read produced before it. */
  const finish = async (controller: ReadableStreamDirectController, step: ClosingStep, before: string) => {
    source.close()
    await write(controller, before)
    switch (step.kind) {
      case 'settle': {
        const settled = await call.settle(servedBy, step.soFar.usage, step.soFar.source)
        await write(controller, step.closing(settled.cost))
        break
      }
      case 'release':
        await call.release()
        await write(controller, step.text)
        break
      case 'fail':
        await write(controller, observer.failure(await closeUnfinished(call, servedBy, step.cause, observer)))
        break
    }
    if (cancelled) return
    controller.close()
    record(200, step.kind === 'settle' ? 'ok' : 'upstream_error')
  }
  const run = async (controller: ReadableStreamDirectController) => {
    while (!cancelled) {
      let items: Item[] | undefined
      try {
        items = await source.read()
      } catch (cause) {
        return finish(controller, { kind: 'fail', cause }, '')
      }
      if (cancelled) return
      if (items === undefined) return finish(controller, observer.end(), '')
      let text = ''
      for (const item of items) {
        const step = observer.step(item)
        if (step.kind !== 'write') return finish(controller, step, text)
        text += step.text
      }
      // Inline rather than through `write`: an async call per chunk costs a promise and a tick even when the write took it all.
      if (text === '' || cancelled) continue
      const written = controller.write(text)
      if (typeof written !== 'number') await written
    }
  }

  return new Response(
    new DirectStream({
      type: 'direct',
      // Called once by the server (again by an in-process reader after each read): one loop serves them all.
      pull(controller) {
        if (started) return
        started = true
        run(controller).catch((error) => {
          if (!cancelled) controller.close(error instanceof Error ? error : new Error(String(error)))
        })
      },
      async cancel() {
        // The client went away: stop the upstream and bill what was generated so far.
        if (cancelled) return
        cancelled = true
        source.close()
        relayed.abortUpstream()
        const { usage, source: usageSource } = observer.soFar()
        await call.settle(servedBy, usage, usageSource)
        record(CLIENT_CLOSED_STATUS, 'client_closed')
      },
    }),
    { headers: SSE_HEADERS },
  )
}

/**
 * Closes the books of a stream that stopped before its end and returns the error its client is
 * told. A stream the gateway stopped for silence (http/idle-timeout.ts) is settled for what was
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

/** The gateway's own count when the provider reported nothing: the input estimate and the output streamed. */
export function estimatedUsage(inputTokens: number, outputTokens: number): Usage {
  return usageOf({ inputTokens, outputTokens })
}

/**
 * Canonical parts from a translated route, written by the surface's encoder. Billing reads only
 * the `finish` part; until it comes, the gateway counts what it relayed.
 */
export function observeTranslated(encoder: StreamEncoder, inputTokens: number): StreamObserver<StreamPart> {
  let outputTokens = 0
  const soFar = (): StreamedSoFar => ({ usage: estimatedUsage(inputTokens, outputTokens), source: 'estimate' })
  return {
    step(part) {
      if (part.type === 'finish') {
        const usage = part.usage ?? soFar().usage
        return {
          kind: 'settle',
          soFar: { usage, source: part.usage ? 'provider' : 'estimate' },
          closing: (cost) => writeSseEvents(encoder.finish(part, usage, cost)),
        }
      }
      if (part.type === 'text-delta' || part.type === 'reasoning-delta') outputTokens += estimateTextTokens(part.text)
      if (part.type === 'tool-call-delta') outputTokens += estimateTextTokens(part.argumentsDelta)
      return { kind: 'write', text: writeSseEvents(encoder.encode(part)) }
    },
    end: () => ({ kind: 'fail', cause: new Error('the upstream stream ended before it finished') }),
    soFar,
    failure: (error) => writeSseEvents(encoder.failure(error)),
  }
}
