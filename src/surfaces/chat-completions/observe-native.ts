import { estimateTextTokens } from '../../billing/estimator'
import type { Usage } from '../../canonical/usage'
import { estimatedUsage } from '../../dispatch/stream-relay'
import type { StreamedSoFar, StreamObserver, StreamStep } from '../../dispatch/surface'
import { errorBody } from '../../errors/render'
import type { SseEvent } from '../../http/sse'
import { isRecord } from '../../util/is-record'
import { parseJsonObject } from '../../util/parse-json-object'

export interface ChatStreamView {
  /** The catalogue model shown in every chunk, whichever route served. */
  shownModel: string
  inputTokens: number
  /** The client set stream_options.include_usage: it gets the usage chunk, with the cost. */
  clientWantsUsage: boolean
  /** The route's reading of a chat `usage` object. */
  usageOf: (reported: unknown) => Usage | undefined
}

/**
 * A native chat stream, chunk by chunk as it arrives. Usage is always asked of the upstream; its
 * usage chunk is held back, settled, and shown (with `cost`) only to clients that asked for it.
 * A chunk carrying `error` breaks the stream; a stream that ends without a finish reason or
 * usage is broken too.
 */
export function observeChatStream(view: ChatStreamView): StreamObserver<SseEvent> {
  let usage: Usage | undefined
  let reportedUsage: unknown
  let lastChunk: Record<string, unknown> | undefined
  let outputTokens = 0
  let finished = false
  const soFar = (): StreamedSoFar => (usage ? { usage, source: 'provider' } : { usage: estimatedUsage(view.inputTokens, outputTokens), source: 'estimate' })

  return {
    step(event): StreamStep {
      if (event.data === '[DONE]') {
        finished = true
        return { kind: 'write', events: [] }
      }
      const chunk = parseJsonObject(event.data)
      if (!chunk) return { kind: 'write', events: [] }
      if (chunk.error) return { kind: 'fail', cause: chunk.error }
      if (chunk.usage) {
        usage = view.usageOf(chunk.usage) ?? usage
        reportedUsage = chunk.usage
      }
      const { usage: _usage, ...shown } = chunk
      const choices = Array.isArray(chunk.choices) ? chunk.choices : undefined
      if (choices?.length === 0) return { kind: 'write', events: [] }
      for (const choice of choices ?? []) {
        if (!isRecord(choice)) continue
        outputTokens += deltaTokens(choice.delta)
        if (choice.finish_reason) finished = true
      }
      lastChunk = shown
      return { kind: 'write', events: [{ data: JSON.stringify({ ...shown, model: view.shownModel }) }] }
    },
    end(): StreamStep {
      if (!finished && !usage) return { kind: 'fail', cause: new Error('the upstream stream ended without finishing') }
      return {
        kind: 'settle',
        soFar: soFar(),
        closing: (cost) => [
          ...(view.clientWantsUsage ? [{ data: JSON.stringify(usageChunk(lastChunk, view.shownModel, reportedUsage, cost)) }] : []),
          { data: '[DONE]' },
        ],
      }
    },
    soFar,
    failure: (error) => [{ data: JSON.stringify(errorBody(error, 'openai')) }],
  }
}

/** The usage chunk as the client sees it: the upstream's usage fields with the cost. */
function usageChunk(last: Record<string, unknown> | undefined, shownModel: string, reported: unknown, cost: number): Record<string, unknown> {
  return {
    id: last?.id,
    object: 'chat.completion.chunk',
    created: last?.created ?? Math.floor(Date.now() / 1000),
    model: shownModel,
    choices: [],
    usage: { ...(isRecord(reported) ? reported : {}), cost },
  }
}

/** Tokens of one streamed delta: text, reasoning, refusal and tool-call arguments. */
function deltaTokens(delta: unknown): number {
  if (!isRecord(delta)) return 0
  let tokens = 0
  for (const field of ['content', 'reasoning_content', 'reasoning', 'refusal']) {
    const value = delta[field]
    if (typeof value === 'string') tokens += estimateTextTokens(value)
  }
  if (Array.isArray(delta.tool_calls)) {
    for (const call of delta.tool_calls) {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : {}
      tokens += estimateTextTokens(typeof fn.name === 'string' ? fn.name : '') + estimateTextTokens(typeof fn.arguments === 'string' ? fn.arguments : '')
    }
  }
  return tokens
}
