import { estimateTextTokens } from '../../billing/estimator'
import { estimatedUsage, type Usage } from '../../canonical/usage'
import type { ClosingStep, EventWriter, StreamedSoFar, StreamObserver, StreamStep } from '../../dispatch/surface'
import type { GatewayError } from '../../errors/gateway-error'
import { errorBody } from '../../errors/render'
import type { FramedSseEvent } from '../../streaming/sse'
import type { UpstreamObject } from '../../streaming/upstream-json'
import { isRecord, parseJsonObject } from '../../util/is-record'
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
  return new ChatStreamObserver(view)
}

/** observeChatStream's state: a class rather than closures, as one is kept per open stream. */
class ChatStreamObserver implements StreamObserver<FramedSseEvent> {
  private usage: Usage | undefined
  private reportedUsage: unknown
  /** The last chunk passed on (or one with its id and created), as the upstream wrote it: parsed once, for the usage chunk's id. */
  private lastData = ''
  private outputTokens = 0
  private finished = false
  private readonly shown: { model: string; json: string }
  /** The frame of the last plain chunk with a content: the next chunks are most likely the same around another content. */
  private frame: ChunkFrame | undefined

  constructor(private readonly view: ChatStreamView) {
    this.shown = { model: view.shownModel, json: JSON.stringify(view.shownModel) }
  }

  step(event: FramedSseEvent): StreamStep {
    if (event.data === '[DONE]') {
      this.finished = true
      return this.end()
    }
    const frame = this.frame
    const content = frame && contentInFrame(event.data, frame)
    if (frame && content !== undefined) {
      // lastData stays the frame's own chunk: same id and created, and nothing new kept per chunk.
      this.outputTokens += estimateTextTokens(content)
      return { kind: 'write', text: frame.shownBefore + content + frame.shownAfter }
    }
    const plain = scanPlainChunk(event.data, this.shown.json)
    if (plain) {
      if (plain.content !== undefined) this.outputTokens += estimateTextTokens(plain.content)
      if (plain.frame) this.frame = plain.frame
      this.lastData = event.data
      return { kind: 'write', text: `data: ${plain.text}\n\n` }
    }
    const chunk = parseJsonObject(event.data)
    if (!chunk) return NOTHING
    if (chunk.error) return { kind: 'fail', cause: chunk.error }
    if (chunk.usage) {
      this.usage = this.view.usageOf(chunk.usage) ?? this.usage
      this.reportedUsage = chunk.usage
    }
    const choices = Array.isArray(chunk.choices) ? chunk.choices : undefined
    if (choices?.length === 0) return NOTHING
    for (const choice of choices ?? []) {
      if (!isRecord(choice)) continue
      this.outputTokens += deltaTokens(choice.delta)
      if (choice.finish_reason) this.finished = true
    }
    this.lastData = event.data
    return { kind: 'write', text: `data: ${shownChunk(event.data, chunk, this.shown)}\n\n` }
  }

  relayEventBytes(event: Uint8Array, out: EventWriter): boolean {
    if (!this.frame) return false
    const wire = wireOf(this.frame)
    const content = contentInFrameBytes(event, wire)
    if (content === undefined) return false
    this.outputTokens += estimateTextTokens(content)
    out.write(wire.shownBefore)
    out.write(content)
    out.write(wire.shownAfter)
    return true
  }

  /** The stream's end: at [DONE], the protocol's last event (whatever the body still holds is not the client's), or at the body's end. */
  end(): ClosingStep {
    if (!this.finished && !this.usage) return { kind: 'fail', cause: new Error('the upstream stream ended without finishing') }
    const { view, lastData, reportedUsage } = this
    return {
      kind: 'settle',
      soFar: this.soFar(),
      closing: (cost) =>
        `${view.clientWantsUsage ? `data: ${JSON.stringify(usageChunk(parseJsonObject(lastData), view.shownModel, reportedUsage, cost))}\n\n` : ''}data: [DONE]\n\n`,
    }
  }

  soFar(): StreamedSoFar {
    return this.usage ? { usage: this.usage, source: 'provider' } : { usage: estimatedUsage(this.view.inputTokens, this.outputTokens), source: 'estimate' }
  }

  failure(error: GatewayError): string {
    return `data: ${JSON.stringify(errorBody(error, 'openai'))}\n\n`
  }
}

/** A chunk that shows nothing (one with no choices, or not JSON). */
const NOTHING: StreamStep = { kind: 'write', text: '' }

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
function shownChunk(data: string, chunk: UpstreamObject, shown: { model: string; json: string }): string {
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

function rewritten(chunk: UpstreamObject, model: string): string {
  const { usage: _usage, ...shown } = chunk
  return JSON.stringify({ ...shown, model })
}

/** The usage chunk as the client sees it: the upstream's usage fields with the cost. */
function usageChunk(last: UpstreamObject | undefined, shownModel: string, reported: unknown, cost: number): UpstreamObject {
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
