import { estimateTextTokens } from '../billing/estimator'
import type { StreamPart } from '../canonical/answer'
import { type Usage, usageOf } from '../canonical/usage'
import type { GatewayError } from '../errors/gateway-error'
import { StreamIdleTimeoutError, UpstreamError } from '../errors/kinds'
import { writeSse, type SseEvent } from '../http/sse'
import { CLIENT_CLOSED_STATUS } from '../observability/request-record'
import type { BilledCall, ServedBy } from './billed-call'
import type { StreamedSoFar, StreamEncoder, StreamObserver, StreamStep } from './surface'

/** The call a relay settles, the route that served it, and how to stop the upstream. */
export interface RelayedCall {
  call: BilledCall
  servedBy: ServedBy
  abortUpstream: () => void
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' }
const encoder = new TextEncoder()

/**
 * The one stream relay: reads the upstream item by item as the client reads, lets the observer
 * decide what each becomes, and closes the books exactly once. A complete stream is settled
 * from its usage and its closing events carry the cost; one the client abandons is settled for
 * what was generated; one that breaks ends with the surface's failure events, released unbilled,
 * and one that goes silent ends the same way, settled for what was streamed.
 */
export function relayStream<Item>(items: AsyncIterable<Item>, observer: StreamObserver<Item>, relayed: RelayedCall): Response {
  const iterator = items[Symbol.asyncIterator]()
  const { call, servedBy } = relayed
  // The request ends with the stream's last byte, not with its headers.
  call.record.streamOpened()
  const write = (controller: ReadableStreamDefaultController<Uint8Array>, events: SseEvent[]) => {
    if (events.length > 0) controller.enqueue(encoder.encode(events.map(writeSse).join('')))
  }
  /** Carries out one step; true when it wrote or ended the stream, so the pull is answered. */
  const carryOut = async (controller: ReadableStreamDefaultController<Uint8Array>, step: StreamStep): Promise<boolean> => {
    switch (step.kind) {
      case 'write':
        write(controller, step.events)
        return step.events.length > 0
      case 'settle': {
        const settled = await call.settle(servedBy, step.soFar.usage, step.soFar.source)
        write(controller, step.closing(settled.cost))
        break
      }
      case 'release':
        await call.release()
        write(controller, step.events)
        break
      case 'fail':
        write(controller, observer.failure(await closeUnfinished(call, servedBy, step.cause, observer)))
        break
    }
    controller.close()
    call.record.finish(200, step.kind === 'settle' ? 'ok' : 'upstream_error')
    return true
  }

  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        // Read on until something is written: a pull that writes nothing would stall the reader.
        for (;;) {
          let step: StreamStep
          try {
            const next = await iterator.next()
            step = next.done ? observer.end() : observer.step(next.value)
          } catch (cause) {
            step = { kind: 'fail', cause }
          }
          if (await carryOut(controller, step)) return
        }
      },
      async cancel() {
        // The client went away: stop the upstream and bill what was generated so far.
        relayed.abortUpstream()
        const { usage, source } = observer.soFar()
        await call.settle(servedBy, usage, source)
        call.record.finish(CLIENT_CLOSED_STATUS, 'client_closed')
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
        return { kind: 'settle', soFar: { usage, source: part.usage ? 'provider' : 'estimate' }, closing: (cost) => encoder.finish(part, usage, cost) }
      }
      if (part.type === 'text-delta' || part.type === 'reasoning-delta') outputTokens += estimateTextTokens(part.text)
      if (part.type === 'tool-call-delta') outputTokens += estimateTextTokens(part.argumentsDelta)
      return { kind: 'write', events: encoder.encode(part) }
    },
    end: () => ({ kind: 'fail', cause: new Error('the upstream stream ended before it finished') }),
    soFar,
    failure: (error) => encoder.failure(error),
  }
}
