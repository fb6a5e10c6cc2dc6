import { errorBody } from '../errors/render'
import { estimateTextTokens } from '../billing/estimator'
import { readSse, writeSse } from '../http/sse'
import type { Usage } from '../spec/usage'
import type { RelayParams } from './billed-call'
import { closeUnfinishedStream, type StreamedSoFar } from './unfinished-stream'

export interface ChatStreamParams extends RelayParams {
  /** The client set stream_options.include_usage: it gets the usage chunk, with the cost. */
  clientWantsUsage: boolean
}

interface Chunk {
  model?: string
  usage?: unknown
  error?: unknown
  choices?: { finish_reason?: string | null; delta?: Record<string, unknown> }[]
  [field: string]: unknown
}

const encoder = new TextEncoder()

/**
 * Relays an OpenAI-format chat stream event by event, as it arrives. Usage is always asked of
 * the upstream; its usage chunk is held back, settled, and shown (with `cost`) only to clients
 * that asked for it. A stream the client abandons is settled for what was generated; a stream
 * the upstream breaks ends with an error chunk and no [DONE], and is not billed; one that goes
 * silent ends the same way and is settled for what was streamed (unfinished-stream.ts).
 */
export function relayChatStream(params: ChatStreamParams): Response {
  const events = readSse(params.upstream.body ?? new ReadableStream())[Symbol.asyncIterator]()
  let usage: Usage | undefined
  let lastUsage: unknown
  let lastChunk: Chunk | undefined
  let outputTokens = 0
  let finished = false

  const estimate = (): Usage => ({ inputTokens: params.inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, webSearchRequests: 0 })
  const soFar = (): StreamedSoFar => (usage ? { usage, source: 'provider' } : { usage: estimate(), source: 'estimate' })

  const fail = async (controller: ReadableStreamDefaultController<Uint8Array>, error: unknown) => {
    const gatewayError = await closeUnfinishedStream(params, error, soFar)
    controller.enqueue(encoder.encode(writeSse({ data: JSON.stringify(errorBody(gatewayError, 'openai')) })))
    controller.close()
  }

  const finish = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (!finished && !usage) return fail(controller, new Error('the upstream stream ended without finishing'))
    const { usage: final, source } = soFar()
    const settled = await params.call.settle(params.model, params.route, final, source)
    if (params.clientWantsUsage) {
      const chunk = { ...usageChunkBase(lastChunk), model: params.model.id, choices: [], usage: { ...usageFields(lastUsage), cost: settled.cost } }
      controller.enqueue(encoder.encode(writeSse({ data: JSON.stringify(chunk) })))
    }
    controller.enqueue(encoder.encode(writeSse({ data: '[DONE]' })))
    controller.close()
  }

  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        // Loop until something is written: a pull that writes nothing would stall the reader.
        for (;;) {
          let next: IteratorResult<{ data: string }>
          try {
            next = await events.next()
          } catch (error) {
            return fail(controller, error)
          }
          if (next.done) return finish(controller)
          if (next.value.data === '[DONE]') {
            finished = true
            continue
          }
          let chunk: Chunk
          try {
            chunk = JSON.parse(next.value.data) as Chunk
          } catch {
            continue
          }
          if (chunk.error) return fail(controller, chunk.error)
          if (chunk.usage) {
            usage = params.adapter.chatUsage?.(chunk.usage) ?? usage
            lastUsage = chunk.usage
          }
          delete chunk.usage
          if (Array.isArray(chunk.choices) && chunk.choices.length === 0) continue
          for (const choice of chunk.choices ?? []) {
            outputTokens += deltaTokens(choice.delta)
            if (choice.finish_reason) finished = true
          }
          lastChunk = chunk
          chunk.model = params.model.id
          controller.enqueue(encoder.encode(writeSse({ data: JSON.stringify(chunk) })))
          return
        }
      },
      async cancel() {
        // The client went away: stop the upstream and bill what was generated so far.
        params.abortUpstream()
        const { usage: final, source } = soFar()
        await params.call.settle(params.model, params.route, final, source)
      },
    }),
    { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' } },
  )
}

/** Tokens of one streamed delta: text, reasoning, refusal and tool-call arguments. */
function deltaTokens(delta: Record<string, unknown> | undefined): number {
  if (!delta) return 0
  let tokens = 0
  for (const field of ['content', 'reasoning_content', 'reasoning', 'refusal']) {
    const value = delta[field]
    if (typeof value === 'string') tokens += estimateTextTokens(value)
  }
  if (Array.isArray(delta.tool_calls)) {
    for (const call of delta.tool_calls as { function?: { name?: string; arguments?: string } }[]) {
      tokens += estimateTextTokens(call.function?.name ?? '') + estimateTextTokens(call.function?.arguments ?? '')
    }
  }
  return tokens
}

function usageChunkBase(chunk: Chunk | undefined): Record<string, unknown> {
  return { id: chunk?.id, object: 'chat.completion.chunk', created: chunk?.created ?? Math.floor(Date.now() / 1000) }
}

function usageFields(raw: unknown): Record<string, unknown> {
  return raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {}
}
