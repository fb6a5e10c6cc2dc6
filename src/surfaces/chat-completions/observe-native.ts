import { estimateTextTokens } from '../../billing/estimator'
import type { Usage } from '../../canonical/usage'
import { estimatedUsage } from '../../dispatch/stream-relay'
import type { ClosingStep, StreamedSoFar, StreamObserver, StreamStep } from '../../dispatch/surface'
import { errorBody } from '../../errors/render'
import type { FramedSseEvent } from '../../http/sse'
import { isRecord } from '../../util/is-record'
import { parseJsonObject } from '../../util/parse-json-object'
import { type ChunkFrame, contentInFrame, contentInFrameBytes, frameAround, wireOf } from './chunk-frame'

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
 * A native chat stream, chunk by chunk as it arrives. Each chunk is read for what billing needs
 * and passed on as the upstream wrote it, with only the model spliced to the catalogue's and the
 * `usage: null` the upstream adds (usage is always asked of it) cut out. Its usage chunk is held
 * back, settled, and shown (with `cost`) only to clients that asked for it. A chunk carrying
 * `error` breaks the stream; a stream that ends without a finish reason or usage is broken too.
 */
export function observeChatStream(view: ChatStreamView): StreamObserver<FramedSseEvent> {
  let usage: Usage | undefined
  let reportedUsage: unknown
  /** The last chunk passed on (or one with its id and created), as the upstream wrote it: parsed once, for the usage chunk's id. */
  let lastData = ''
  let outputTokens = 0
  let finished = false
  const soFar = (): StreamedSoFar => (usage ? { usage, source: 'provider' } : { usage: estimatedUsage(view.inputTokens, outputTokens), source: 'estimate' })
  const shown = { model: view.shownModel, json: JSON.stringify(view.shownModel) }
  const nothing: StreamStep = { kind: 'write', text: '' }
  /** The frame of the last plain chunk with a content: the next chunks are most likely the same around another content. */
  let frame: ChunkFrame | undefined

  /** The stream's end: at [DONE], the protocol's last event (whatever the body still holds is not the client's), or at the body's end. */
  const closing = (): ClosingStep => {
    if (!finished && !usage) return { kind: 'fail', cause: new Error('the upstream stream ended without finishing') }
    return {
      kind: 'settle',
      soFar: soFar(),
      closing: (cost) =>
        `${view.clientWantsUsage ? `data: ${JSON.stringify(usageChunk(parseJsonObject(lastData), view.shownModel, reportedUsage, cost))}\n\n` : ''}data: [DONE]\n\n`,
    }
  }

  return {
    step(event): StreamStep {
      if (event.data === '[DONE]') {
        finished = true
        return closing()
      }
      const content = frame && contentInFrame(event.data, frame)
      if (frame && content !== undefined) {
        // lastData stays the frame's own chunk: same id and created, and nothing new kept per chunk.
        outputTokens += estimateTextTokens(content)
        return { kind: 'write', text: frame.shownBefore + content + frame.shownAfter }
      }
      const plain = scanPlainChunk(event.data, shown.json)
      if (plain) {
        if (plain.content !== undefined) outputTokens += estimateTextTokens(plain.content)
        if (plain.frame) frame = plain.frame
        lastData = event.data
        return { kind: 'write', text: `data: ${plain.text}\n\n` }
      }
      const chunk = parseJsonObject(event.data)
      if (!chunk) return nothing
      if (chunk.error) return { kind: 'fail', cause: chunk.error }
      if (chunk.usage) {
        usage = view.usageOf(chunk.usage) ?? usage
        reportedUsage = chunk.usage
      }
      const choices = Array.isArray(chunk.choices) ? chunk.choices : undefined
      if (choices?.length === 0) return nothing
      for (const choice of choices ?? []) {
        if (!isRecord(choice)) continue
        outputTokens += deltaTokens(choice.delta)
        if (choice.finish_reason) finished = true
      }
      lastData = event.data
      return { kind: 'write', text: `data: ${shownChunk(event.data, chunk, shown)}\n\n` }
    },
    relayEventBytes(event, out) {
      if (!frame) return false
      const wire = wireOf(frame)
      const content = contentInFrameBytes(event, wire)
      if (content === undefined) return false
      outputTokens += estimateTextTokens(content)
      out.write(wire.shownBefore)
      out.write(content)
      out.write(wire.shownAfter)
      return true
    },
    end: closing,
    soFar,
    failure: (error) => `data: ${JSON.stringify(errorBody(error, 'openai'))}\n\n`,
  }
}

/** Keys that send a chunk down the parsing path: an error, tool calls, reasoning, a refusal, log probabilities. */
const UNCOMMON = ['"error"', '"tool_calls"', '"reasoning', '"refusal":"', '"logprobs":{', '"logprobs":[']

/**
 * Most chunks of a stream are one choice's content delta, written compactly. Those are read with
 * a few substring searches instead of a parse, and shown with the same splices as shownChunk:
 * the text as the client gets it and the content to count (the same string a parse would give,
 * so the estimate is the same). Anything else (a finish reason, usage figures, several choices,
 * an uncommon key, another spelling) answers undefined and takes the parsing path.
 */
export function scanPlainChunk(data: string, shownModelJson: string): { text: string; content: string | undefined; frame?: ChunkFrame } | undefined {
  for (const key of UNCOMMON) if (data.includes(key)) return undefined
  if (!once(data, '"finish_reason":null') || !once(data, '"delta":{')) return undefined
  let text = data
  if (data.includes('"usage"')) {
    const without = withoutOnce(text, ',"usage":null') ?? withoutOnce(text, '"usage":null,')
    if (without === undefined) return undefined
    text = without
  }
  const modelAt = text.indexOf('"model":"')
  if (modelAt < 0 || text.indexOf('"model"', modelAt + 1) >= 0) return undefined
  const modelEnd = text.indexOf('"', modelAt + 9)
  if (modelEnd < 0 || text.lastIndexOf('\\', modelEnd) > modelAt) return undefined
  text = `${text.slice(0, modelAt)}"model":${shownModelJson}${text.slice(modelEnd + 1)}`
  const contentAt = data.indexOf('"content":')
  if (contentAt < 0) return { text, content: undefined }
  if (data.indexOf('"content"', contentAt + 1) >= 0) return undefined
  const before = data[contentAt - 1]
  if (before !== '{' && before !== ',') return undefined
  const valueAt = contentAt + 10
  if (data.startsWith('null', valueAt)) return { text, content: undefined }
  if (data[valueAt] !== '"') return undefined
  const end = stringEnd(data, valueAt + 1)
  if (end < 0) return undefined
  const literal = data.slice(valueAt, end + 1)
  if (!literal.includes('\\')) return { text, content: literal.slice(1, -1), frame: frameAround(data, text, valueAt + 1, end) }
  const content: unknown = JSON.parse(literal)
  return typeof content === 'string' ? { text, content } : undefined
}

/** Where the JSON string starting at `from` (after its opening quote) ends: its closing quote, or -1. */
function stringEnd(data: string, from: number): number {
  for (let quote = data.indexOf('"', from); quote >= 0; quote = data.indexOf('"', quote + 1)) {
    let backslashes = 0
    while (data.charCodeAt(quote - 1 - backslashes) === 92) backslashes++
    if (backslashes % 2 === 0) return quote
  }
  return -1
}

function once(text: string, part: string): boolean {
  const at = text.indexOf(part)
  return at >= 0 && text.indexOf(part, at + 1) < 0
}

/**
 * The chunk's text as the client gets it: the upstream's own, with the model value replaced and
 * a `usage` key taken out, spliced where each occurs once as the upstream's compact JSON writes
 * it. Any other spelling (spaces, escapes, a key written twice) is written anew from the parsed
 * chunk: the same content, at the cost of a serialisation.
 */
function shownChunk(data: string, chunk: Record<string, unknown>, shown: { model: string; json: string }): string {
  let text = data
  if (chunk.usage !== undefined) {
    text = withoutOnce(text, ',"usage":null') ?? withoutOnce(text, '"usage":null,') ?? ''
    if (text === '' || chunk.usage !== null) return rewritten(chunk, shown.model)
  }
  if (typeof chunk.model !== 'string') return rewritten(chunk, shown.model)
  const model = `"model":${JSON.stringify(chunk.model)}`
  const at = text.indexOf(model)
  if (at < 0 || text.indexOf(model, at + 1) >= 0) return rewritten(chunk, shown.model)
  return `${text.slice(0, at)}"model":${shown.json}${text.slice(at + model.length)}`
}

function withoutOnce(text: string, part: string): string | undefined {
  const at = text.indexOf(part)
  if (at < 0 || text.indexOf(part, at + 1) >= 0) return undefined
  return text.slice(0, at) + text.slice(at + part.length)
}

function rewritten(chunk: Record<string, unknown>, model: string): string {
  const { usage: _usage, ...shown } = chunk
  return JSON.stringify({ ...shown, model })
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
