import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ProviderApi } from '../../src/providers/registry'
import { isRecord } from '../../src/util/is-record'

/**
 * Recorded wire fixtures, written by hand in each API's real format: `<case>.json` is a JSON
 * body, `<case>.sse` a stream exactly as the upstream frames it.
 */
const ROOT = join(import.meta.dir, '..', 'fixtures')

export function fixtureText(api: ProviderApi, file: string): string {
  return readFileSync(join(ROOT, api, file), 'utf8')
}

export function fixtureJson(api: ProviderApi, name: string): unknown {
  return JSON.parse(fixtureText(api, `${name}.json`))
}

/** A JSON fixture as the upstream's HTTP response. */
export function jsonResponse(api: ProviderApi, name: string, status = 200): Response {
  return new Response(fixtureText(api, `${name}.json`), { status, headers: { 'content-type': 'application/json' } })
}

/** An SSE fixture as a byte stream, cut into small pieces so that events straddle reads. */
export function sseBody(api: ProviderApi, name: string): ReadableStream<Uint8Array> {
  return chunkedStream(fixtureText(api, `${name}.sse`))
}

export function chunkedStream(text: string, size = 37): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  let offset = 0
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close()
      controller.enqueue(bytes.slice(offset, offset + size))
      offset += size
    },
  })
}

/** A field of a JSON object fixture, or a failure naming what was missing. */
export function fieldOf(value: unknown, field: string): unknown {
  if (!isRecord(value) || !(field in value)) throw new Error(`fixture has no field ${field}`)
  return value[field]
}
