import { estimateTextTokens } from '../billing/estimator'
import { errorBody } from '../errors/render'
import { readSse, writeSse, type SseEvent } from '../http/sse'
import type { RelayParams } from './billed-call'
import { closeUnfinishedStream, type StreamedSoFar } from './unfinished-stream'

export interface MessagesStreamParams extends RelayParams {
  /** The model id the client asked for, shown in message_start whichever route served. */
  shownModel: string
}

type Usages = Record<string, unknown>

const encoder = new TextEncoder()

/**
 * Relays a native messages stream event by event, keeping the upstream's sequence. The last
 * message_delta is held back until message_stop: the call is settled from its cumulative usage,
 * and it goes out carrying `usage.cost`. A broken stream ends with `event: error` and is not
 * billed; a stream the client abandons is billed for what was generated, and so is one that goes
 * silent (it too ends with `event: error`; unfinished-stream.ts).
 */
export function relayMessagesStream(params: MessagesStreamParams): Response {
  const events = readSse(params.upstream.body ?? new ReadableStream())[Symbol.asyncIterator]()
  let reported: Usages = {}
  let streamedTokens = 0
  let pendingDelta: Record<string, unknown> | undefined

  const usage = (): StreamedSoFar => {
    const provider = params.adapter.messagesUsage?.(reported)
    if (provider && typeof reported.output_tokens === 'number' && pendingDelta) return { usage: provider, source: 'provider' }
    const input = provider ?? { inputTokens: params.inputTokens, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, webSearchRequests: 0 }
    return { usage: { ...input, outputTokens: Math.max(input.outputTokens, streamedTokens) }, source: 'estimate' }
  }
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, event: SseEvent) => controller.enqueue(encoder.encode(writeSse(event)))
  const fail = async (controller: ReadableStreamDefaultController<Uint8Array>, cause: unknown) => {
    const error = await closeUnfinishedStream(params, cause, usage)
    send(controller, { event: 'error', data: JSON.stringify(errorBody(error, 'messages')) })
    controller.close()
  }

  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          let next: IteratorResult<SseEvent>
          try {
            next = await events.next()
          } catch (error) {
            return fail(controller, error)
          }
          if (next.done) return fail(controller, new Error('the upstream stream ended before message_stop'))
          const event = next.value
          let data: Record<string, unknown>
          try {
            data = JSON.parse(event.data) as Record<string, unknown>
          } catch {
            send(controller, event)
            return
          }
          switch (data.type ?? event.event) {
            case 'error':
              return fail(controller, data.error)
            case 'message_start': {
              const message = (data.message ?? {}) as Record<string, unknown>
              reported = { ...(message.usage as Usages | undefined) }
              send(controller, { event: event.event, data: JSON.stringify({ ...data, message: { ...message, model: params.shownModel } }) })
              return
            }
            case 'content_block_delta':
              streamedTokens += deltaTokens(data.delta)
              send(controller, event)
              return
            case 'message_delta': {
              // Cumulative: later figures replace earlier ones; absent ones keep message_start's.
              const delta = (data.usage ?? {}) as Usages
              for (const [field, value] of Object.entries(delta)) if (value !== null && value !== undefined) reported[field] = value
              if (pendingDelta) send(controller, { event: 'message_delta', data: JSON.stringify(pendingDelta) })
              pendingDelta = data
              continue
            }
            case 'message_stop': {
              const { usage: final, source } = usage()
              const settled = await params.call.settle(params.model, params.route, final, source)
              if (pendingDelta) {
                const shown = { ...pendingDelta, usage: { ...((pendingDelta.usage ?? {}) as Usages), cost: settled.cost } }
                send(controller, { event: 'message_delta', data: JSON.stringify(shown) })
              }
              send(controller, event)
              controller.close()
              return
            }
            default:
              send(controller, event)
              return
          }
        }
      },
      async cancel() {
        params.abortUpstream()
        const { usage: soFar, source } = usage()
        await params.call.settle(params.model, params.route, soFar, source)
      },
    }),
    { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' } },
  )
}

/** Tokens of one content_block_delta: text, thinking, tool input or citations. */
function deltaTokens(delta: unknown): number {
  if (!delta || typeof delta !== 'object') return 0
  const { text, thinking, partial_json: partialJson } = delta as { text?: unknown; thinking?: unknown; partial_json?: unknown }
  return [text, thinking, partialJson].reduce((total: number, value) => total + (typeof value === 'string' ? estimateTextTokens(value) : 0), 0)
}
