import { estimateTextTokens } from '../../billing/estimator'
import { estimatedUsage, type Usage } from '../../canonical/usage'
import type { StreamedSoFar, StreamObserver, StreamStep } from '../../dispatch/surface'
import { responsesStreamError } from '../../errors/render'
import { type FramedSseEvent, writeSse } from '../../streaming/sse'
import type { UpstreamObject } from '../../streaming/upstream-json'
import { isRecord, parseJsonObject } from '../../util/is-record'
import { scrubCredentials } from '../../util/scrub-credentials'

export interface ResponsesStreamView {
  /** The catalogue model shown in every response object, whichever route served. */
  shownModel: string
  inputTokens: number
  /** The route's reading of a Responses `usage` object. */
  usageOf: (reported: unknown) => Usage | undefined
}

const TERMINAL = new Set(['response.completed', 'response.incomplete'])

/**
 * A native Responses event stream, event by event. The final response.completed (or
 * incomplete) is settled from its usage and goes out with `usage.cost`; response.failed or an
 * error event is the upstream's own failure, released and passed on; a stream that just stops
 * is broken.
 */
export function observeResponsesStream(view: ResponsesStreamView): StreamObserver<FramedSseEvent> {
  let outputTokens = 0
  let sequence = 0
  const soFar = (): StreamedSoFar => ({ usage: estimatedUsage(view.inputTokens, outputTokens), source: 'estimate' })
  const withModel = (data: UpstreamObject): UpstreamObject =>
    isRecord(data.response) ? { ...data, response: { ...data.response, model: view.shownModel } } : data

  return {
    step(event): StreamStep {
      const data = parseJsonObject(event.data)
      if (!data) return { kind: 'write', text: event.raw }
      const type = typeof data.type === 'string' ? data.type : (event.event ?? '')
      if (typeof data.sequence_number === 'number') sequence = data.sequence_number + 1
      if (type === 'response.output_text.delta' && typeof data.delta === 'string') outputTokens += estimateTextTokens(data.delta)
      if (TERMINAL.has(type)) {
        const response = isRecord(data.response) ? data.response : {}
        const usage = view.usageOf(response.usage)
        return {
          kind: 'settle',
          soFar: usage ? { usage, source: 'provider' } : soFar(),
          closing: (cost) =>
            writeSse({
              event: type,
              data: JSON.stringify({
                ...data,
                response: { ...response, model: view.shownModel, usage: { ...(isRecord(response.usage) ? response.usage : {}), cost } },
              }),
            }),
        }
      }
      // The upstream's own words go to the client: scrubbed like every upstream message (util/scrub-credentials.ts).
      if (type === 'response.failed' || type === 'error')
        return { kind: 'release', text: writeSse({ event: type, data: scrubCredentials(JSON.stringify(withModel(data))) }) }
      return { kind: 'write', text: data.response ? writeSse({ event: type, data: JSON.stringify(withModel(data)) }) : event.raw }
    },
    end: () => ({ kind: 'fail', cause: new Error('the upstream stream ended before response.completed') }),
    soFar,
    failure: (error) => writeSse({ event: 'error', data: JSON.stringify(responsesStreamError(error, sequence)) }),
  }
}
