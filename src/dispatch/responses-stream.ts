import { estimateTextTokens } from '../billing/estimator'
import { readSse, writeSse, type SseEvent } from '../http/sse'
import type { Usage } from '../spec/usage'
import type { RelayParams } from './billed-call'
import { closeUnfinishedStream } from './unfinished-stream'

type Json = Record<string, unknown>

const encoder = new TextEncoder()
const TERMINAL = new Set(['response.completed', 'response.incomplete'])

/**
 * Relays a native Responses event stream event by event. The final response.completed (or
 * incomplete) is settled from its usage and goes out with `usage.cost`; response.failed or an
 * error event releases the hold; a stream that just stops ends with an `error` event, released,
 * and one that goes silent ends the same way, settled for what was streamed (unfinished-stream.ts).
 */
export function relayResponsesStream(params: RelayParams): Response {
  const events = readSse(params.upstream.body ?? new ReadableStream())[Symbol.asyncIterator]()
  let outputTokens = 0
  let sequence = 0
  const estimate = (): Usage => ({ inputTokens: params.inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, webSearchRequests: 0 })
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, event: SseEvent) => controller.enqueue(encoder.encode(writeSse(event)))
  const withModel = (data: Json): Json => (data.response && typeof data.response === 'object' ? { ...data, response: { ...(data.response as Json), model: params.model.id } } : data)
  const fail = async (controller: ReadableStreamDefaultController<Uint8Array>, cause: unknown) => {
    const error = await closeUnfinishedStream(params, cause, () => ({ usage: estimate(), source: 'estimate' }))
    send(controller, { event: 'error', data: JSON.stringify({ type: 'error', code: error.code, message: error.message, param: null, sequence_number: sequence }) })
    controller.close()
  }

  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        let next: IteratorResult<SseEvent>
        try {
          next = await events.next()
        } catch (cause) {
          return fail(controller, cause)
        }
        if (next.done) return fail(controller, new Error('the upstream stream ended before response.completed'))
        let data: Json
        try {
          data = JSON.parse(next.value.data) as Json
        } catch {
          return send(controller, next.value)
        }
        const type = String(data.type ?? next.value.event)
        if (typeof data.sequence_number === 'number') sequence = data.sequence_number + 1
        if (type === 'response.output_text.delta' && typeof data.delta === 'string') outputTokens += estimateTextTokens(data.delta)
        if (TERMINAL.has(type)) {
          const response = (data.response ?? {}) as Json
          const usage = params.adapter.responsesUsage?.(response.usage)
          const settled = await params.call.settle(params.model, params.route, usage ?? estimate(), usage ? 'provider' : 'estimate')
          const shown = { ...withModel(data), response: { ...response, model: params.model.id, usage: { ...((response.usage ?? {}) as Json), cost: settled.cost } } }
          send(controller, { event: type, data: JSON.stringify(shown) })
          return controller.close()
        }
        if (type === 'response.failed' || type === 'error') {
          await params.call.release()
          send(controller, { event: type, data: JSON.stringify(withModel(data)) })
          return controller.close()
        }
        send(controller, data.response ? { event: type, data: JSON.stringify(withModel(data)) } : next.value)
      },
      async cancel() {
        params.abortUpstream()
        await params.call.settle(params.model, params.route, estimate(), 'estimate')
      },
    }),
    { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' } },
  )
}
