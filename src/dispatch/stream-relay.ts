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

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' }
const encoder = new TextEncoder()

/**
 * The one stream relay: reads the upstream as the client reads (one body stream, pulled, no
 * stream or generator in between for native routes), lets the observer decide what each item
 * becomes, writes what one read produced as one chunk, and closes the books exactly once. A
 * complete stream is settled from its usage and its closing events carry the cost; one the
 * client abandons is settled for what was generated; one that breaks ends with the surface's
 * failure events, released unbilled, and one that goes silent ends the same way, settled for
 * what was streamed.
 */
export function relayStream<Item>(source: StreamSource<Item>, observer: StreamObserver<Item>, relayed: RelayedCall): Response {
  const { call, servedBy } = relayed
  // The request ends with the stream's last byte, not with its headers.
  call.record.streamOpened()
  const write = (controller: ReadableStreamDefaultController<Uint8Array>, text: string) => {
    if (text !== '') controller.enqueue(encoder.encode(text))
  }
  /** Carries out the step that ends the stream, after the text the same read produced before it. */
  const finish = async (controller: ReadableStreamDefaultController<Uint8Array>, step: ClosingStep, before: string) => {
    source.close()
    write(controller, before)
    switch (step.kind) {
      case 'settle': {
        const settled = await call.settle(servedBy, step.soFar.usage, step.soFar.source)
        write(controller, step.closing(settled.cost))
        break
      }
      case 'release':
        await call.release()
        write(controller, step.text)
        break
      case 'fail':
        write(controller, observer.failure(await closeUnfinished(call, servedBy, step.cause, observer)))
        break
    }
    controller.close()
    call.record.finish(200, step.kind === 'settle' ? 'ok' : 'upstream_error')
  }

  return new Response(
    new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          // Read on until something is written: a pull that writes nothing would stall the reader.
          for (;;) {
            let items: Item[] | undefined
            try {
              items = await source.read()
            } catch (cause) {
              return finish(controller, { kind: 'fail', cause }, '')
            }
            if (items === undefined) {
              return finish(controller, observer.end(), '')
            }
            let text = ''
            for (const item of items) {
              const step = observer.step(item)
              if (step.kind !== 'write') return finish(controller, step, text)
              text += step.text
            }
            if (text !== '') return write(controller, text)
          }
        },
        async cancel() {
          // The client went away: stop the upstream and bill what was generated so far.
          source.close()
          relayed.abortUpstream()
          const { usage, source: usageSource } = observer.soFar()
          await call.settle(servedBy, usage, usageSource)
          call.record.finish(CLIENT_CLOSED_STATUS, 'client_closed')
        },
      },
      // Nothing is read ahead of the client: the silence clock measures the upstream, not a queue.
      { highWaterMark: 0 },
    ),
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
