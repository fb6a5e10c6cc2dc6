import { describe, expect, test } from 'bun:test'
import { RequestTimeoutError } from '../../src/errors/kinds'
import { boundedChunks, readLimited } from '../../src/http/body-limits'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/http/json-body'
import { readMultipartForm } from '../../src/http/multipart-form'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

const encoder = new TextEncoder()
const MiB = 1024 * 1024

/** A body stream that hands out `chunks` one per pull and counts how many were taken. */
function countedStream(chunks: Iterable<Uint8Array>): { stream: ReadableStream<Uint8Array>; pulls: () => number } {
  const iterator = chunks[Symbol.iterator]()
  let pulls = 0
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulls++
        const next = iterator.next()
        if (next.done) controller.close()
        else controller.enqueue(next.value)
      },
    },
    { highWaterMark: 0 },
  )
  return { stream, pulls: () => pulls }
}

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth)
}

describe('JSON depth', () => {
  test('the pre-scan counts brackets outside strings and respects escapes', () => {
    expect(nestsDeeperThan(encoder.encode(nested(MAX_JSON_DEPTH)), MAX_JSON_DEPTH)).toBe(false)
    expect(nestsDeeperThan(encoder.encode(nested(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH)).toBe(true)
    expect(nestsDeeperThan(encoder.encode(JSON.stringify({ text: '['.repeat(500) })), 2)).toBe(false)
    // An escaped quote does not end the string; an escaped backslash before a quote does.
    expect(nestsDeeperThan(encoder.encode(JSON.stringify({ text: '\\"[[[[' })), 2)).toBe(false)
    expect(nestsDeeperThan(encoder.encode('{"a":"\\\\"}'), 1)).toBe(false)
    expect(nestsDeeperThan(encoder.encode(`{"é":"ü[[[","b":${nested(3)}}`), 3)).toBe(true)
  })
})

describe('bounded request bodies through the gateway', () => {
  const suite = gatewaySuite(testDatabases[0]!)

  test('100,000 nested brackets: 400 invalid_request at once, in the envelope of the surface', async () => {
    const { key } = await suite.harness.key()
    const body = nested(100_000)
    // The first call on a route compiles its handler and looks the key up; not what is measured.
    await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: '[]' })
    const started = performance.now()
    const chat = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body })
    expect(performance.now() - started).toBeLessThan(200)
    expectError(chat, 400, 'invalid_request')
    expect(chat.json.error.message).toContain('128 levels')
    expectError(await suite.harness.call('POST', '/v1/messages', { headers: { 'x-api-key': key }, body }), 400, 'invalid_request', 'messages')
    // Without a credential the body is not even read.
    expectError(await suite.harness.call('POST', '/v1/chat/completions', { body }), 401, 'invalid_api_key')
  })

  test('128 levels are parsed (and then checked against the schema), 129 are refused unparsed', async () => {
    const { key } = await suite.harness.key()
    const deepest = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: nested(MAX_JSON_DEPTH) })
    expectError(deepest, 400, 'invalid_request')
    expect(deepest.json.error.message).not.toContain('levels')
    const tooDeep = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: nested(MAX_JSON_DEPTH + 1) })
    expectError(tooDeep, 400, 'invalid_request')
    expect(tooDeep.json.error.message).toContain('128 levels')
  })

  test('a realistic deeply nested tool schema is accepted', async () => {
    const { key } = await suite.harness.key()
    // Twelve levels of objects in arrays, each described as JSON Schema: already deeper than real tools.
    let schema: object = { type: 'string' }
    for (let level = 0; level < 12; level++) {
      schema = { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: schema } }, required: ['name'] }
    }
    const reply = await suite.harness.call('POST', '/v1/chat/completions', {
      headers: bearer(key),
      body: {
        model: 'test/cheap',
        messages: [{ role: 'user', content: 'Draw the tree.' }],
        tools: [{ type: 'function', function: { name: 'draw_tree', description: 'A tree of nodes', parameters: schema } }],
        max_tokens: 10,
      },
    })
    expect(reply.status).toBe(200)
  })
})

function form(parts: { name: string; value: string; filename?: string }[], boundary: string): string {
  return (
    parts
      .map(
        (part) =>
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}\r\n` +
          `${part.filename ? 'Content-Type: audio/mpeg\r\n' : ''}\r\n${part.value}\r\n`,
      )
      .join('') + `--${boundary}--\r\n`
  )
}

async function* single(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.slice(offset, offset + size)
}

describe('multipart forms', () => {
  const suite = gatewaySuite(testDatabases[0]!)
  const transcribe = (headers: Record<string, string>, body: ReadableStream<Uint8Array> | string, boundary = 'b0undary') =>
    suite.harness.gateway.handle(
      new Request('http://localhost/v1/audio/transcriptions', {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...headers },
        body,
      }),
    )

  test('the reader finds the same fields however the body is cut into chunks', async () => {
    const text = form(
      [
        { name: 'model', value: 'test/whisper' },
        { name: 'file', value: 'ID3 \r\n--b0undar not quite', filename: 'a "quoted" name.mp3' },
        { name: 'tag', value: 'one' },
        { name: 'tag', value: 'twö' },
        { name: '__proto__', value: '{"polluted":true}' },
      ],
      'b0undary',
    ).replace('a "quoted" name', 'a \\"quoted\\" name')
    const bytes = encoder.encode(`preamble\r\n${text}epilogue`)
    for (const size of [1, 2, 7, 64, bytes.length]) {
      const record = await readMultipartForm(single(bytes, size), 'b0undary')
      expect(record.model).toBe('test/whisper')
      expect(record.tag).toEqual(['one', 'twö'])
      const file = record.file as File
      expect(file).toBeInstanceOf(File)
      expect(file.name).toBe('a "quoted" name.mp3')
      expect(file.type).toBe('audio/mpeg')
      expect(await file.text()).toBe('ID3 \r\n--b0undar not quite')
      expect(Object.hasOwn(record, '__proto__')).toBe(true)
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    }
    await expect(
      readMultipartForm(single(encoder.encode('--b0undary\r\nContent-Disposition: form-data; name="x"\r\n\r\nnever closed'), 5), 'b0undary'),
    ).rejects.toThrow('closing boundary')
  })

  test('without a credential: 401, the body left unread', async () => {
    const counted = countedStream(Array.from({ length: 1000 }, () => encoder.encode(form([{ name: 'x', value: 'y' }], 'b0undary'))))
    const response = await transcribe({}, counted.stream)
    expect(response.status).toBe(401)
    expect(counted.pulls()).toBeLessThanOrEqual(1)
  })

  test('a form of thousands of parts is refused at the 51st, without reading the rest', async () => {
    const { key } = await suite.harness.key()
    const part = encoder.encode('--b0undary\r\nContent-Disposition: form-data; name="x"\r\n\r\ny\r\n')
    const counted = countedStream(Array.from({ length: 900_000 }, () => part))
    const started = performance.now()
    const response = await transcribe(bearer(key), counted.stream)
    expect(response.status).toBe(413)
    expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'request_too_large',
      message: expect.stringContaining('50 parts'),
    })
    expect(counted.pulls()).toBeLessThan(60)
    expect(performance.now() - started).toBeLessThan(500)
  })

  test('a chunked body with no Content-Length is counted against the 26 MiB limit as it arrives', async () => {
    const { key } = await suite.harness.key()
    const head = encoder.encode('--b0undary\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\n\r\n')
    const filler = new Uint8Array(MiB)
    const counted = countedStream([head, ...Array.from({ length: 60 }, () => filler)])
    const response = await transcribe(bearer(key), counted.stream)
    expect(response.status).toBe(413)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('request_too_large')
    expect(counted.pulls()).toBeLessThanOrEqual(28)
  })

  test('a transcription form read by the gateway reaches the provider whole', async () => {
    const { key } = await suite.harness.key()
    const wav = await Bun.file(`${import.meta.dir}/../fixtures/audio/pcm16.wav`).bytes()
    const body = new FormData()
    body.append('model', 'test/whisper')
    body.append('file', new File([wav], 'speech.wav', { type: 'audio/wav' }))
    body.append('response_format', 'json')
    const response = await suite.harness.gateway.handle(new Request('http://localhost/v1/audio/transcriptions', { method: 'POST', headers: bearer(key), body }))
    expect(response.status).toBe(200)
    const sent = suite.upstream.received.at(-1)!
    expect(sent.path).toBe('/v1/audio/transcriptions')
    expect(sent.body).toMatchObject({ model: 'whisper-a', response_format: 'json' })
  })
})

describe('body pace', () => {
  const timing = { graceMs: 150, minimumBytesPerSecond: 100, idleMs: 1_000 }

  function trickle(intervalMs: number, total: number): ReadableStream<Uint8Array> {
    let sent = 0
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        await Bun.sleep(intervalMs)
        if (sent++ >= total) controller.close()
        else controller.enqueue(new Uint8Array([0x20]))
      },
    })
  }

  test('a body that trickles a byte at a time is cut once it falls behind its earned time', async () => {
    const request = new Request('http://localhost/v1/chat/completions', { method: 'POST', body: trickle(40, 1_000) })
    const started = performance.now()
    await expect(readLimited(request, MiB, timing)).rejects.toBeInstanceOf(RequestTimeoutError)
    expect(performance.now() - started).toBeLessThan(600)
  })

  test('a body that goes silent is cut after the idle time, even with time earned', async () => {
    let first = true
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (first) controller.enqueue(new Uint8Array(100_000))
        first = false
        return new Promise(() => {})
      },
    })
    const request = new Request('http://localhost/', { method: 'POST', body: stream })
    const started = performance.now()
    const error = await readLimited(request, MiB, { ...timing, idleMs: 200 }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RequestTimeoutError)
    expect((error as RequestTimeoutError).status).toBe(408)
    expect((error as RequestTimeoutError).headers.connection).toBe('close')
    expect(performance.now() - started).toBeLessThan(600)
  })

  test('a body that keeps its pace is read whole', async () => {
    const request = new Request('http://localhost/', { method: 'POST', body: trickle(5, 20) })
    let size = 0
    for await (const chunk of boundedChunks(request, MiB, timing)) size += chunk.byteLength
    expect(size).toBe(20)
  })
})
