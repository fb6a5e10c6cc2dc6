import { estimateTextTokens } from '../billing/estimator'
import type { ModelEntry } from '../catalog/catalog-schema'
import type { GatewayError } from '../errors/gateway-error'
import { writeSse, type SseEvent } from '../http/sse'
import type { StreamPart } from '../spec/answer'
import type { Usage } from '../spec/usage'
import type { BilledCall } from './billed-call'
import { closeUnfinishedStream } from './unfinished-stream'

/** Writes canonical parts in one surface's stream format. */
export interface SurfaceStreamEncoder {
  encode(part: StreamPart): SseEvent[]
  /** The closing events, once the call is settled; they carry the cost. */
  finish(part: Extract<StreamPart, { type: 'finish' }>, usage: Usage, cost: number): SseEvent[]
  /** How the surface's stream ends when it fails after its first byte. */
  failure(error: GatewayError): SseEvent[]
}

export interface TranslatedStreamParams {
  parts: AsyncIterable<StreamPart>
  encoder: SurfaceStreamEncoder
  abortUpstream: () => void
  call: BilledCall
  model: ModelEntry
  route: string
  inputTokens: number
}

const encoder = new TextEncoder()

/**
 * Relays a stream that crosses formats: upstream events become canonical parts (the provider's
 * convert-stream), and parts become the surface's events. Billing reads only the `finish` part;
 * an abandoned or silent stream is billed by the gateway's own count, a broken one not at all.
 */
export function relayTranslatedStream(params: TranslatedStreamParams): Response {
  const parts = params.parts[Symbol.asyncIterator]()
  let outputTokens = 0
  const estimate = (): Usage => ({ inputTokens: params.inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, webSearchRequests: 0 })
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, events: SseEvent[]) => {
    if (events.length > 0) controller.enqueue(encoder.encode(events.map(writeSse).join('')))
  }

  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          let next: IteratorResult<StreamPart>
          try {
            next = await parts.next()
          } catch (cause) {
            const error = await closeUnfinishedStream(params, cause, () => ({ usage: estimate(), source: 'estimate' }))
            send(controller, params.encoder.failure(error))
            return controller.close()
          }
          if (next.done) return controller.close()
          const part = next.value
          if (part.type === 'finish') {
            const usage = part.usage ?? estimate()
            const settled = await params.call.settle(params.model, params.route, usage, part.usage ? 'provider' : 'estimate')
            send(controller, params.encoder.finish(part, usage, settled.cost))
            return controller.close()
          }
          if (part.type === 'text-delta' || part.type === 'reasoning-delta') outputTokens += estimateTextTokens(part.text)
          if (part.type === 'tool-call-delta') outputTokens += estimateTextTokens(part.argumentsDelta)
          const events = params.encoder.encode(part)
          if (events.length === 0) continue
          send(controller, events)
          return
        }
      },
      async cancel() {
        params.abortUpstream()
        await params.call.settle(params.model, params.route, estimate(), 'estimate')
      },
    }),
    { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' } },
  )
}
