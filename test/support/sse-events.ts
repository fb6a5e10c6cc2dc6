import type { StreamPart } from '../../src/canonical/answer'
import { sseSource, upstreamBodyOf } from '../../src/dispatch/stream-sources'
import type { StreamTranslator } from '../../src/providers/adapter'
import type { FramedSseEvent } from '../../src/streaming/sse'
import { drainSource } from './drain-source'

/** The events of a byte stream as the relay frames them (the same stream source); throws what the source failed with. */
export async function sseEventsOf(body: ReadableStream<Uint8Array>): Promise<FramedSseEvent[]> {
  const { items, failure } = await drainSource(sseSource(upstreamBodyOf(new Response(body)), 10_000, () => undefined))
  if (failure !== undefined) throw failure
  return items
}

/** A stream's parts as a translated relay makes them: each event through the translator, then its end; throws what the translator threw. */
export async function translatedParts(translator: StreamTranslator, body: ReadableStream<Uint8Array>): Promise<StreamPart[]> {
  const parts: StreamPart[] = []
  for (const event of await sseEventsOf(body)) parts.push(...translator.event(event))
  parts.push(...translator.end())
  return parts
}
