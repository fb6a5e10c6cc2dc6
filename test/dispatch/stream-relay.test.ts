import { describe, expect, test } from 'bun:test'
import { usageOf } from '../../src/canonical/usage'
import type { BilledCall } from '../../src/dispatch/billed-call'
import { relayStream } from '../../src/dispatch/stream-relay'
import type { RelaySink, StreamSource } from '../../src/dispatch/stream-sources'
import type { StreamObserver } from '../../src/dispatch/surface'
import { UpstreamError } from '../../src/errors/kinds'

/**
 * The relay when its observer throws (usage it cannot read, an event a translator refuses): the
 * throw happens inside the upstream socket's callback, so the relay must turn it into the
 * stream's failure (its events written, the call released unbilled, the request recorded)
 * instead of letting it escape.
 */
function fakeCall() {
  const seen = { settled: 0, released: 0, finished: [] as [number, string][], answered: [] as string[] }
  const call = {
    record: {
      streamOpened: () => undefined,
      finish: (status: number, outcome: string) => seen.finished.push([status, outcome]),
      answeredError: (code: string) => seen.answered.push(code),
    },
    settle: async () => {
      seen.settled++
      return { cost: 0 }
    },
    release: async () => {
      seen.released++
      return { cost: 0 }
    },
  } as unknown as BilledCall
  return { call, seen }
}

function sourceOf(items: string[]): StreamSource<string> {
  return {
    start(sink: RelaySink<string>) {
      for (const item of items) sink.items([item])
      sink.end()
    },
    close: () => undefined,
  }
}

const observer = (throwOn: string | undefined, throwAtEnd = false): StreamObserver<string> => ({
  step(item) {
    if (item === throwOn) throw new UpstreamError('The upstream sent a malformed chat usage.')
    return { kind: 'write', text: `${item};` }
  },
  end() {
    if (throwAtEnd) throw new UpstreamError('The upstream stream ended before it finished.')
    return { kind: 'settle', soFar: { usage: usageOf({ inputTokens: 1, outputTokens: 1 }), source: 'provider' }, closing: () => 'done;' }
  },
  soFar: () => ({ usage: usageOf({ inputTokens: 1, outputTokens: 1 }), source: 'estimate' }),
  failure: (error) => `failed:${error.message};`,
})

/** Relays `items` through `watched` to an in-process reader: the text written and what the call saw. */
async function relay(items: string[], watched: StreamObserver<string>) {
  const { call, seen } = fakeCall()
  const response = relayStream(sourceOf(items), watched, {
    call,
    servedBy: {} as never,
    abortUpstream: () => undefined,
    clientSignal: new AbortController().signal,
  })
  return { text: await response.text(), seen }
}

describe('the relay and an observer that throws', () => {
  test('a throw on an item fails the stream: what came before, then the failure; released, not settled, recorded once', async () => {
    const { text, seen } = await relay(['a', 'b', 'bad', 'c'], observer('bad'))
    expect(text).toStartWith('a;b;')
    expect(text).toContain('failed:')
    expect(text).not.toContain('c;')
    expect(seen).toEqual({ settled: 0, released: 1, finished: [[200, 'upstream_error']], answered: ['upstream_error'] })
  })

  test('a throw at the end fails the stream the same way', async () => {
    const { text, seen } = await relay(['a'], observer(undefined, true))
    expect(text).toStartWith('a;')
    expect(text).toContain('failed:')
    expect(seen).toEqual({ settled: 0, released: 1, finished: [[200, 'upstream_error']], answered: ['upstream_error'] })
  })

  test('without a throw the stream settles and writes its closing', async () => {
    const { text, seen } = await relay(['a', 'b'], observer(undefined))
    expect(text).toBe('a;b;done;')
    expect(seen).toEqual({ settled: 1, released: 0, finished: [[200, 'ok']], answered: [] })
  })
})
