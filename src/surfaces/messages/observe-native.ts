import { estimateTextTokens } from '../../billing/estimator'
import { estimatedUsage, type Usage } from '../../canonical/usage'
import type { StreamedSoFar, StreamObserver, StreamStep } from '../../dispatch/surface'
import { errorBody } from '../../errors/render'
import { type FramedSseEvent, writeSse } from '../../streaming/sse'
import type { UpstreamObject } from '../../streaming/upstream-json'
import { isRecord, parseJsonObject } from '../../util/is-record'
import { type MessagesUsage, updateStreamUsage } from '../../wire/messages/usage'

export interface MessagesStreamView {
  /** The model id the client asked for, shown in message_start whichever route served. */
  shownModel: string
  inputTokens: number
  /** The route's reading of a messages `usage` object. */
  usageOf: (reported: unknown) => Usage | undefined
}

/**
 * A native messages stream, event by event, in the upstream's sequence. The last message_delta
 * is held back until message_stop: the call is settled from its cumulative usage, and it goes
 * out carrying `usage.cost`. An `error` event breaks the stream, and so does an end before
 * message_stop.
 */
export function observeMessagesStream(view: MessagesStreamView): StreamObserver<FramedSseEvent> {
  const reported: MessagesUsage = {}
  let streamedTokens = 0
  let pendingDelta: UpstreamObject | undefined

  const soFar = (): StreamedSoFar => {
    const provider = view.usageOf(reported)
    if (provider && typeof reported.output_tokens === 'number' && pendingDelta) return { usage: provider, source: 'provider' }
    const input = provider ?? estimatedUsage(view.inputTokens, 0)
    return { usage: { ...input, outputTokens: Math.max(input.outputTokens, streamedTokens) }, source: 'estimate' }
  }
  const write = (text = ''): StreamStep => ({ kind: 'write', text })
  const passOn = (event: FramedSseEvent): StreamStep => ({ kind: 'write', text: event.raw })

  return {
    step(event): StreamStep {
      const text = plainTextDelta(event.data)
      if (text !== undefined) {
        streamedTokens += estimateTextTokens(text)
        return passOn(event)
      }
      const data = parseJsonObject(event.data)
      if (!data) return passOn(event)
      switch (data.type ?? event.event) {
        case 'error':
          return { kind: 'fail', cause: data.error }
        case 'message_start': {
          const message = isRecord(data.message) ? data.message : {}
          updateStreamUsage(reported, message.usage)
          return write(writeSse({ event: event.event, data: JSON.stringify({ ...data, message: { ...message, model: view.shownModel } }) }))
        }
        case 'content_block_delta':
          streamedTokens += deltaTokens(data.delta)
          return passOn(event)
        case 'message_delta': {
          // Cumulative: later figures replace earlier ones; absent ones keep message_start's.
          updateStreamUsage(reported, data.usage)
          const previous = pendingDelta
          pendingDelta = data
          return previous ? write(writeSse({ event: 'message_delta', data: JSON.stringify(previous) })) : write()
        }
        case 'message_stop': {
          const last = pendingDelta
          return {
            kind: 'settle',
            soFar: soFar(),
            closing: (cost) =>
              (last
                ? writeSse({ event: 'message_delta', data: JSON.stringify({ ...last, usage: { ...(isRecord(last.usage) ? last.usage : {}), cost } }) })
                : '') + event.raw,
          }
        }
        default:
          return passOn(event)
      }
    },
    end: () => ({ kind: 'fail', cause: new Error('the upstream stream ended before message_stop') }),
    soFar,
    failure: (error) => writeSse({ event: 'error', data: JSON.stringify(errorBody(error, 'messages')) }),
  }
}

const TEXT_DELTA_START = '{"type":"content_block_delta","index":'
const TEXT_DELTA_TEXT = ',"delta":{"type":"text_delta","text":"'

/**
 * Most events of a messages stream are text deltas, which the upstream writes compactly as
 * `{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}`. The text
 * of one in that spelling, holding no quote or backslash, is read in place: a delta passed on
 * and counted like any other, without a parse. Anything else answers undefined and is parsed.
 */
export function plainTextDelta(data: string): string | undefined {
  if (!data.startsWith(TEXT_DELTA_START) || !data.endsWith('"}}')) return undefined
  let at = TEXT_DELTA_START.length
  while (data.charCodeAt(at) >= 48 && data.charCodeAt(at) <= 57) at++
  if (at === TEXT_DELTA_START.length || !data.startsWith(TEXT_DELTA_TEXT, at)) return undefined
  const start = at + TEXT_DELTA_TEXT.length
  if (start > data.length - 3) return undefined
  const text = data.slice(start, data.length - 3)
  return text.includes('"') || text.includes('\\') ? undefined : text
}

/** Tokens of one content_block_delta: text, thinking, tool input or citations. */
function deltaTokens(delta: unknown): number {
  if (!isRecord(delta)) return 0
  return [delta.text, delta.thinking, delta.partial_json].reduce(
    (total: number, value) => total + (typeof value === 'string' ? estimateTextTokens(value) : 0),
    0,
  )
}
