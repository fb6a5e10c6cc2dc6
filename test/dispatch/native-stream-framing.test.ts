import { describe, expect, test } from 'bun:test'
import { estimateTextTokens } from '../../src/billing/estimator'
import { usageOf } from '../../src/canonical/usage'
import { sseSource, upstreamBodyOf } from '../../src/dispatch/stream-sources'
import type { ClosingStep, StreamObserver } from '../../src/dispatch/surface'
import { UpstreamError } from '../../src/errors/kinds'
import { type FramedSseEvent, MAX_SSE_EVENT_CHARS, SseFramer } from '../../src/streaming/sse'
import { observeChatStream, scanPlainChunk } from '../../src/surfaces/chat-completions/observe-native'
import { observeMessagesStream, plainTextDelta } from '../../src/surfaces/messages/observe-native'
import { drainSource } from '../support/drain-source'

const encoder = new TextEncoder()

/** A body of these chunks, pulled as the relay pulls a response fetch made. */
function bodyOf(chunks: Uint8Array[]) {
  return upstreamBodyOf(
    new Response(
      new ReadableStream({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk)
          controller.close()
        },
      }),
    ),
  )
}

/** Everything a relay would write for `chunks` (the closing text settled at a fixed cost), and what it would bill on abandon. */
async function relayText(chunks: Uint8Array[], observer: StreamObserver<FramedSseEvent>): Promise<{ text: string; outputTokens: number; settled: string }> {
  const source = sseSource(bodyOf(chunks), 10_000, () => undefined)
  let text = ''
  const { items, failure } = await drainSource(source)
  if (failure !== undefined) throw failure
  // A stream's last event (chat's [DONE]) may end it before the body does, as the relay takes it.
  let closing: ClosingStep | undefined
  for (const item of items) {
    const step = observer.step(item)
    if (step.kind !== 'write') {
      closing = step
      break
    }
    text += step.text
  }
  const outputTokens = observer.soFar().usage.outputTokens
  const end = closing ?? observer.end()
  if (end.kind !== 'settle') throw new Error(`ended with ${end.kind}`)
  return { text: text + end.closing(0.25), outputTokens, settled: JSON.stringify(end.soFar) }
}

const chatObserver = (clientWantsUsage = true) =>
  observeChatStream({
    shownModel: 'test/cheap',
    inputTokens: 7,
    clientWantsUsage,
    usageOf: (reported) => {
      const fields = reported as { prompt_tokens?: number; completion_tokens?: number }
      return typeof fields.prompt_tokens === 'number' ? usageOf({ inputTokens: fields.prompt_tokens, outputTokens: fields.completion_tokens ?? 0 }) : undefined
    },
  })

const base = '"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741569952,"model":"cheap-upstream","system_fingerprint":"fp"'
const chunk = (delta: string, finish = 'null') =>
  `data: {${base},"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}],"usage":null}\n\n`
const CHAT_STREAM = [
  chunk('{"role":"assistant","content":"","refusal":null}'),
  chunk('{"content":"Hello, "}'),
  chunk('{"content":"wörld \\"quoted\\" \\\\ \\u00e9\\n"}'),
  chunk('{"content":"done."}'),
  chunk('{}', '"stop"'),
  `data: {${base},"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}\n\n`,
  'data: [DONE]\n\n',
].join('')

describe('native streams: framing and observation', () => {
  test('chat: an event split at every byte boundary gives the same bytes and the same counts', async () => {
    const bytes = encoder.encode(CHAT_STREAM)
    const whole = await relayText([bytes], chatObserver())
    // The client's view: the upstream's chunks with the catalogue model and no usage:null, then the usage chunk with the cost.
    const data = whole.text.split('\n\n').filter(Boolean)
    expect(data.at(-1)).toBe('data: [DONE]')
    const shown = data.slice(0, -1).map((line) => JSON.parse(line.slice(6)))
    expect(shown.every((each) => each.model === 'test/cheap')).toBe(true)
    expect(shown.slice(0, -1).every((each) => !('usage' in each))).toBe(true)
    expect(shown.at(-1).usage).toEqual({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, cost: 0.25 })
    expect(shown.map((each) => each.choices[0]?.delta?.content ?? '').join('')).toBe('Hello, wörld "quoted" \\ é\ndone.')
    // Before the usage chunk, the gateway's own count is the estimate of exactly the delta texts.
    const expectedTokens = ['', 'Hello, ', 'wörld "quoted" \\ é\n', 'done.'].reduce((sum, text) => sum + estimateTextTokens(text), 0)
    for (let split = 1; split < bytes.length; split++) {
      const parts = await relayText([bytes.slice(0, split), bytes.slice(split)], chatObserver())
      expect(parts).toEqual(whole)
    }
    // One byte per network chunk.
    expect(
      await relayText(
        Array.from(bytes, (byte) => Uint8Array.of(byte)),
        chatObserver(),
      ),
    ).toEqual(whole)
    expect(whole.settled).toContain('"source":"provider"')
    // Cut before the finish: what an abandoned stream is billed.
    const estimate = chatObserver()
    const source = sseSource(bodyOf([encoder.encode(CHAT_STREAM.slice(0, CHAT_STREAM.indexOf(chunk('{}', '"stop"'))))]), 10_000, () => undefined)
    for (const item of (await drainSource(source)).items) estimate.step(item)
    expect(estimate.soFar()).toEqual({ usage: usageOf({ inputTokens: 7, outputTokens: expectedTokens }), source: 'estimate' })
  })

  test('chat: many events coalesced into one network chunk, with CRLF line ends, give the same events', async () => {
    const crlf = CHAT_STREAM.replaceAll('\n', '\r\n')
    const bytes = encoder.encode(crlf)
    const expected = await relayText([encoder.encode(CHAT_STREAM)], chatObserver())
    expect(await relayText([bytes], chatObserver())).toEqual(expected)
    for (let split = 1; split < bytes.length; split += 3) expect(await relayText([bytes.slice(0, split), bytes.slice(split)], chatObserver())).toEqual(expected)
  })

  test('chat: a chunk read by the frame of the one before shows and counts as a chunk scanned alone', () => {
    // Each chunk through one observer (frames reused) and through a fresh observer each (every chunk scanned).
    const events = [
      chunk('{"role":"assistant","content":"","refusal":null}'),
      chunk('{"content":"Hello"}'),
      chunk('{"content":", wörld"}'),
      chunk('{"content":""}'),
      chunk('{"content":"a \\"quote\\""}'),
      chunk('{"content":"back\\\\slash"}'),
      chunk('{"content":"error"}'),
      chunk('{"content":"tool_calls"}'),
      chunk('{"content":"after"}'),
      chunk('{"content":"other","refusal":null}'),
      chunk('{"content":"x"}').replace('chatcmpl-1', 'chatcmpl-2'),
      chunk('{"content":"y"}').replace('"usage":null', '"usage":{"prompt_tokens":3}'),
      chunk('{"content":"z"}'),
    ].map((text) => ({ data: text.slice(6, -2), raw: text }))
    const reused = chatObserver()
    let tokensAlone = 0
    for (const [index, event] of events.entries()) {
      const alone = chatObserver()
      expect(reused.step(event)).toEqual(alone.step(event))
      // Before the chunk that reports usage, the estimate is the sum of each chunk's alone.
      tokensAlone += alone.soFar().usage.outputTokens
      if (index < events.length - 2) expect(reused.soFar().usage.outputTokens).toBe(tokensAlone)
    }
    expect(tokensAlone).toBeGreaterThan(0)
  })

  test('chat: the scanned chunk is what a parse and a rewrite would show, with the same content', () => {
    const shownJson = JSON.stringify('test/cheap')
    const cases = [
      `{${base},"choices":[{"index":0,"delta":{"content":"a \\"b\\" \\\\"},"logprobs":null,"finish_reason":null}],"usage":null}`,
      `{"usage":null,${base},"choices":[{"index":0,"delta":{"content":null},"finish_reason":null}]}`,
      `{${base},"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}`,
      `{${base},"choices":[{"index":0,"delta":{"content":"\\ud83d\\ude00 emoji"},"finish_reason":null}]}`,
    ]
    for (const data of cases) {
      const scanned = scanPlainChunk(data, shownJson)
      if (!scanned) throw new Error(`not scanned: ${data}`)
      const { usage: _usage, ...parsed } = JSON.parse(data)
      expect(JSON.parse(scanned.text)).toEqual({ ...parsed, model: 'test/cheap' })
      const content = parsed.choices[0].delta.content
      expect(scanned.content).toBe(typeof content === 'string' ? content : undefined)
    }
    // Anything uncommon takes the parsing path.
    for (const data of [
      `{${base},"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`,
      `{${base},"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}`,
      `{${base},"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null},{"index":1,"delta":{"content":"y"},"finish_reason":null}]}`,
      `{${base},"choices":[],"usage":{"prompt_tokens":1}}`,
      `{"id":"x","model": "spaced","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`,
      `{${base},"error":{"message":"boom"}}`,
    ])
      expect(scanPlainChunk(data, shownJson)).toBeUndefined()
  })

  test('messages: a text delta read in place is the text a parse reads; anything else is left to the parse', () => {
    const delta = (index: number, inner: object) => JSON.stringify({ type: 'content_block_delta', index, delta: inner })
    const plain = [
      delta(0, { type: 'text_delta', text: 'Hello ' }),
      delta(12, { type: 'text_delta', text: '' }),
      delta(3, { type: 'text_delta', text: 'wörld 😀 }}' }),
    ]
    for (const data of plain) expect(plainTextDelta(data)).toBe(JSON.parse(data).delta.text)
    for (const data of [
      delta(0, { type: 'text_delta', text: 'a "quote"' }),
      delta(0, { type: 'text_delta', text: 'back\\slash\n' }),
      delta(0, { type: 'thinking_delta', thinking: 'hmm' }),
      delta(0, { type: 'input_json_delta', partial_json: '{"a":' }),
      delta(0, { type: 'text_delta', text: 'x', extra: 1 }),
      '{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"x"}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"}}',
      '{"type":"content_block_delta", "index":0,"delta":{"type":"text_delta","text":"x"}}',
    ])
      expect(plainTextDelta(data)).toBeUndefined()
  })

  test('messages: events pass through byte for byte except message_start and the held message_delta', async () => {
    const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
    const delta = event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi there' } })
    const stream = [
      event('message_start', { message: { id: 'msg', model: 'claude-upstream', usage: { input_tokens: 9, output_tokens: 1 } } }),
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      delta,
      event('content_block_stop', { index: 0 }),
      event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
      event('message_stop', {}),
    ].join('')
    const observer = () =>
      observeMessagesStream({
        shownModel: 'anthropic/claude-test',
        inputTokens: 4,
        usageOf: (reported) => {
          const fields = reported as { input_tokens?: number; output_tokens?: number }
          return typeof fields.input_tokens === 'number' ? usageOf({ inputTokens: fields.input_tokens, outputTokens: fields.output_tokens ?? 0 }) : undefined
        },
      })
    const bytes = encoder.encode(stream)
    const run = async (chunks: Uint8Array[]) => {
      const watched = observer()
      const source = sseSource(bodyOf(chunks), 10_000, () => undefined)
      let text = ''
      for (const item of (await drainSource(source)).items) {
        const step = watched.step(item)
        if (step.kind === 'write') text += step.text
        else if (step.kind === 'settle') text += step.closing(0.5)
      }
      return text
    }
    const whole = await run([bytes])
    expect(whole).toContain(delta)
    expect(whole).toContain('"model":"anthropic/claude-test"')
    expect(whole).toContain('"cost":0.5')
    for (let split = 1; split < bytes.length; split += 2) expect(await run([bytes.slice(0, split), bytes.slice(split)])).toBe(whole)
  })

  test('an upstream event that never ends fails the source past the bound, and the upstream is stopped', async () => {
    let stopped = false
    let sent = 0
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 64 * 1024
        controller.enqueue(encoder.encode(sent === 64 * 1024 ? `data: ${'x'.repeat(64 * 1024 - 6)}` : 'x'.repeat(64 * 1024)))
      },
    })
    const source = sseSource(upstreamBodyOf(new Response(endless)), 10_000, () => {
      stopped = true
    })
    const { items, failure } = await drainSource(source)
    expect(items).toEqual([])
    expect(failure).toBeInstanceOf(UpstreamError)
    expect(stopped).toBe(true)
    expect(sent).toBeLessThanOrEqual(MAX_SSE_EVENT_CHARS + 2 * 64 * 1024)
  })
})

describe('the stream source decodes as one decoder for the whole stream would', () => {
  // A byte order mark at the start (dropped), two in the middle (kept: the second makes a field
  // of another name, so no event), characters of two, three and four bytes.
  const STREAM = encoder.encode('\uFEFFdata: é1\n\ndata: \uFEFFx日本\n\n\uFEFFdata: hidden\n\ndata: plain\n\ndata: ö😀\n\n')
  const reference = () => {
    const framer = new SseFramer()
    return [...framer.push(new TextDecoder().decode(STREAM)), ...framer.end()].map((event) => event.data)
  }
  const fed = async (cuts: number[]) => {
    const chunks = [0, ...cuts, STREAM.length].slice(1).map((end, index, ends) => STREAM.slice(index === 0 ? 0 : ends[index - 1], end))
    const { items, failure } = await drainSource(sseSource(bodyOf(chunks), 10_000, () => undefined))
    expect(failure).toBeUndefined()
    return items.map((item) => item.data)
  }

  test('cut anywhere, once or twice: whole chunks and cut characters alike', async () => {
    const expected = reference()
    expect(expected).toEqual(['é1', '\uFEFFx日本', 'plain', 'ö😀'])
    for (let first = 1; first < STREAM.length; first++) {
      expect(await fed([first])).toEqual(expected)
      for (let second = first + 1; second < STREAM.length; second += 3) expect(await fed([first, second])).toEqual(expected)
    }
  })
})
