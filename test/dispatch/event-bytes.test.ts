import { describe, expect, test } from 'bun:test'
import type { Usage } from '../../src/canonical/usage'
import { usageOf } from '../../src/canonical/usage'
import type { BilledCall } from '../../src/dispatch/billed-call'
import { relayStream } from '../../src/dispatch/stream-relay'
import { sseSource, upstreamBodyOf } from '../../src/dispatch/stream-sources'
import type { StreamObserver } from '../../src/dispatch/surface'
import type { FramedSseEvent } from '../../src/streaming/sse'
import { type ChunkFrame, contentInFrame, contentInFrameBytes, frameAround, wireOf } from '../../src/surfaces/chat-completions/chunk-frame'
import { observeChatStream, scanPlainChunk } from '../../src/surfaces/chat-completions/observe-native'

/**
 * A native chat stream's common chunk (the last one's frame around another plain content)
 * relayed as bytes, without being decoded, framed or rebuilt as text. It must be invisible: the
 * client gets the same bytes and the call is billed the same as when every event is read as text.
 */
const encoder = new TextEncoder()
const base = '"id":"chatcmpl-9","object":"chat.completion.chunk","created":1741569952,"model":"cheap-upstream"'
const chunk = (delta: string, finish = 'null') =>
  `data: {${base},"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}],"usage":null}\n\n`
const content = (text: string) => chunk(`{"content":${JSON.stringify(text)}}`)
const CLOSE = [
  chunk('{}', '"stop"'),
  `data: {${base},"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":61,"total_tokens":73}}\n\n`,
  'data: [DONE]\n\n',
]

const chatObserver = () =>
  observeChatStream({
    shownModel: 'test/cheap',
    inputTokens: 7,
    clientWantsUsage: true,
    usageOf: (reported) => {
      const fields = reported as { prompt_tokens?: number; completion_tokens?: number }
      return typeof fields.prompt_tokens === 'number' ? usageOf({ inputTokens: fields.prompt_tokens, outputTokens: fields.completion_tokens ?? 0 }) : undefined
    },
  })

/** A body that brings these network chunks one at a time. */
function bodyOf(chunks: string[]) {
  return upstreamBodyOf(
    new Response(
      new ReadableStream({
        start(controller) {
          for (const part of chunks) controller.enqueue(encoder.encode(part))
          controller.close()
        },
      }),
    ),
  )
}

/**
 * Relays `chunks` through a real relay to an in-process reader. With `bytesTaken` false, the
 * observer offers no byte path (every event is read as text). Reports the client's text, what
 * was settled (or billed on leaving), and how many events went as bytes.
 */
async function relayed(chunks: string[], observer: StreamObserver<FramedSseEvent>, bytesTaken = true) {
  let asBytes = 0
  let settled: Usage | undefined
  const relayEventBytes = observer.relayEventBytes?.bind(observer)
  const watched: StreamObserver<FramedSseEvent> = {
    step: (event) => observer.step(event),
    end: () => observer.end(),
    soFar: () => observer.soFar(),
    failure: (error) => observer.failure(error),
    relayEventBytes:
      bytesTaken && relayEventBytes
        ? (event, out) => {
            const taken = relayEventBytes(event, out)
            if (taken) asBytes++
            return taken
          }
        : undefined,
  }
  const call = {
    record: { streamOpened: () => undefined, finish: () => undefined },
    settle: async (_servedBy: unknown, usage: Usage) => {
      settled = usage
      return { cost: 0.25 }
    },
    release: async () => ({ cost: 0 }),
  } as unknown as BilledCall
  const response = relayStream(
    sseSource(bodyOf(chunks), 10_000, () => undefined),
    watched,
    {
      call,
      servedBy: {} as never,
      abortUpstream: () => undefined,
      clientSignal: new AbortController().signal,
    },
  )
  return { text: await response.text(), settled, asBytes, estimated: observer.soFar().usage.outputTokens }
}

/** The same stream relayed both ways: the text path's result, and the byte path's with how many events it took. */
async function bothWays(chunks: string[]) {
  const asText = await relayed(chunks, chatObserver(), false)
  const withBytes = await relayed(chunks, chatObserver())
  expect(asText.asBytes).toBe(0)
  expect(withBytes.text).toBe(asText.text)
  expect(withBytes.settled).toEqual(asText.settled)
  expect(withBytes.estimated).toBe(asText.estimated)
  return withBytes
}

describe('a native chat stream relayed as bytes', () => {
  test('one event per network chunk: every content chunk after the first goes as bytes, and the client sees what the text path writes', async () => {
    const words = Array.from({ length: 60 }, (_, index) => `word${index} `)
    const chunks = [chunk('{"role":"assistant","content":""}'), ...words.map(content), ...CLOSE]
    const { text, asBytes, estimated } = await bothWays(chunks)
    // The first content chunk sets the frame (the role chunk's differs); the other 59 match it.
    expect(asBytes).toBe(59)
    expect(text).toContain('"model":"test/cheap"')
    expect(text).not.toContain('cheap-upstream')
    expect(text).not.toContain('"usage":null')
    for (const word of words) expect(text).toContain(`"content":"${word}"`)
    expect(text).toContain('"cost":0.25')
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true)
    expect(estimated).toBeGreaterThan(60)
  })

  test('contents that need reading (quotes, escapes, non-ASCII, control characters) are read as text, and the rest still go as bytes', async () => {
    const odd = ['say "hi"', 'back\\slash', 'wörld', 'tab\there', '日本語', 'line\nend']
    const chunks = [content('plain '), ...odd.flatMap((text) => [content(text), content('again ')]), ...CLOSE]
    const { asBytes } = await bothWays(chunks)
    // Each "again" after an odd one, whose frame is still the plain one, goes as bytes; no odd one does.
    expect(asBytes).toBe(odd.length)
  })

  test('events split across network chunks, or several in one, are read as text; a whole event after them goes as bytes again', async () => {
    const first = content('one ')
    const split = content('two ')
    const chunks = [first, split.slice(0, 40), split.slice(40), content('three ') + content('four '), content('five '), content('six '), ...CLOSE]
    const { asBytes } = await bothWays(chunks)
    expect(asBytes).toBe(2)
  })

  test('a chunk that looks like a whole event but ends one begun before it is read with what came before', async () => {
    // `data: early` and the next chunk are one event of two data lines: taken alone, the second
    // would match the frame and go out as a chunk of its own (the text path's output differs).
    const chunks = [content('start '), 'data: early\n', content('alpha '), content('beta '), ...CLOSE]
    const { asBytes, text } = await bothWays(chunks)
    expect(text).toContain('early')
    // The two-line event sets a frame of its own, which "beta" does not match.
    expect(asBytes).toBe(0)
  })
})

describe('contentInFrameBytes', () => {
  const frameOf = (text: string): ChunkFrame => {
    const data = content(text).slice(6, -2)
    const frame = scanPlainChunk(data, '"test/cheap"')?.frame
    if (!frame) throw new Error('no frame')
    return frame
  }
  const eventBytes = (text: string) => encoder.encode(content(text))

  test('finds the same content as the text path for every plain printable content, and nothing else', () => {
    const frame = frameOf('first')
    const wire = wireOf(frame)
    for (const text of ['', 'a', ' word ', '{}[],:;', 'x'.repeat(5000), '~!@#$%^&*()_+=-`']) {
      expect(contentInFrameBytes(eventBytes(text), wire)).toBe(text)
      expect(contentInFrame(content(text).slice(6, -2), frame)).toBe(text)
    }
    for (const text of ['"', 'a\\b', 'é', '\u0001', '\n']) expect(contentInFrameBytes(eventBytes(text), wire)).toBeUndefined()
  })

  test('an event of another frame, a truncated one, or one with bytes around it is refused', () => {
    const wire = wireOf(frameOf('first'))
    const other = encoder.encode(content('x').replace('chatcmpl-9', 'chatcmpl-8'))
    expect(contentInFrameBytes(other, wire)).toBeUndefined()
    const event = eventBytes('word')
    expect(contentInFrameBytes(event.subarray(0, event.length - 1), wire)).toBeUndefined()
    expect(contentInFrameBytes(event.subarray(1), wire)).toBeUndefined()
    expect(contentInFrameBytes(encoder.encode(`${content('word')}\n`), wire)).toBeUndefined()
    expect(contentInFrameBytes(wire.before, wire)).toBeUndefined()
  })

  test('the bytes shown are the text shown, model spliced', () => {
    const frame = frameAround('{"model":"up","content":"x"}', '{"model":"shown","content":"x"}', 25, 26)
    const wire = wireOf(frame)
    const decoder = new TextDecoder()
    expect(decoder.decode(wire.shownBefore)).toBe(frame.shownBefore)
    expect(decoder.decode(wire.shownAfter)).toBe(frame.shownAfter)
    expect(decoder.decode(wire.before)).toBe(`data: ${frame.before}`)
    expect(wireOf(frame)).toBe(wire)
  })
})
