import { estimateTextTokens } from '../../billing/estimator'
import { estimatedUsage, type Usage } from '../../canonical/usage'
import type { StreamedSoFar, StreamObserver, StreamStep } from '../../dispatch/surface'
import { googleErrorBody } from '../../errors/google-envelope'
import { UpstreamError } from '../../errors/kinds'
import { type FramedSseEvent, writeSse } from '../../streaming/sse'
import type { UpstreamObject } from '../../streaming/upstream-json'
import { isRecord, parseJsonObject } from '../../util/is-record'

export interface GeminiStreamView {
  /** The gateway model id, shown as every chunk's `modelVersion` whichever route served. */
  shownModel: string
  inputTokens: number
  /** The route's reading of a `usageMetadata` object. */
  usageOf: (reported: unknown) => Usage | undefined
}

/**
 * A native streamGenerateContent?alt=sse stream, chunk by chunk. Google's stream has no closing
 * event (the connection just closes), so each chunk is held back until the next arrives: the
 * last one goes out once the call is settled, its `usageMetadata` carrying the cost. Usage is
 * cumulative (on Vertex only the last chunk has it); an error chunk breaks the stream, and so
 * does an end before a finish reason.
 */
export function observeGeminiStream(view: GeminiStreamView): StreamObserver<FramedSseEvent> {
  let held: UpstreamObject | undefined
  let usage: Usage | undefined
  let finished = false
  let streamedTokens = 0

  const soFar = (): StreamedSoFar => {
    if (usage && finished) return { usage, source: 'provider' }
    const input = usage ?? estimatedUsage(view.inputTokens, 0)
    return { usage: { ...input, outputTokens: Math.max(input.outputTokens, streamedTokens) }, source: 'estimate' }
  }
  const written = (chunk: UpstreamObject | undefined, extra: UpstreamObject = {}) =>
    chunk ? writeSse({ data: JSON.stringify({ ...chunk, ...extra, modelVersion: view.shownModel }) }) : ''

  return {
    step(event): StreamStep {
      const data = parseJsonObject(event.data)
      if (!data) return { kind: 'fail', cause: new UpstreamError('The upstream sent a stream chunk that is not a JSON object.') }
      if (data.error !== undefined) return { kind: 'fail', cause: data.error }
      usage = view.usageOf(data.usageMetadata) ?? usage
      const candidate = Array.isArray(data.candidates) ? data.candidates[0] : undefined
      streamedTokens += chunkTokens(candidate)
      if ((isRecord(candidate) && candidate.finishReason !== undefined) || (candidate === undefined && isRecord(data.promptFeedback))) finished = true
      const previous = held
      held = data
      return { kind: 'write', text: written(previous) }
    },
    end() {
      const last = held
      if (!last || !finished) return { kind: 'fail', cause: new UpstreamError('The upstream stream ended before it finished.') }
      return {
        kind: 'settle',
        soFar: soFar(),
        closing: (cost) => written(last, { usageMetadata: { ...(isRecord(last.usageMetadata) ? last.usageMetadata : {}), cost } }),
      }
    },
    soFar,
    failure: (error) => writeSse({ data: JSON.stringify(googleErrorBody(error)) }),
  }
}

/** The gateway's count of one chunk's generated text, thoughts and call arguments. */
function chunkTokens(candidate: unknown): number {
  const content = isRecord(candidate) ? candidate.content : undefined
  const parts = isRecord(content) && Array.isArray(content.parts) ? content.parts : []
  return parts.reduce((total: number, part) => {
    if (!isRecord(part)) return total
    const text = typeof part.text === 'string' ? estimateTextTokens(part.text) : 0
    return total + text + (part.functionCall === undefined ? 0 : estimateTextTokens(JSON.stringify(part.functionCall)))
  }, 0)
}
