import { afterAll, describe, expect, test } from 'bun:test'
import { sseSource, upstreamBodyOf } from '../../src/dispatch/stream-sources'
import { StreamIdleTimeoutError } from '../../src/errors/kinds'
import { createUpstreamClient, rawBodyOf } from '../../src/upstream-http/client'
import { drainSource } from '../support/drain-source'
import { rawServer } from './servers'

/**
 * The seam between the client and the relay: a response of the own client is piped to the relay
 * through its raw body (no ReadableStream), events framed across network chunks; silence on it
 * fails the source with the idle timeout and closes the upstream socket; a response from fetch
 * is still read through its body stream.
 */
const server = rawServer(async (connection, request) => {
  connection.socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n')
  // An event cut in two across network chunks, then a whole one.
  connection.socket.write('9\r\ndata: {"a\r\n')
  await Bun.sleep(5)
  connection.socket.write('5\r\n":1}\n\r\n')
  await Bun.sleep(5)
  connection.socket.write('2\r\n\n\n\r\n')
  if (request.startsWith('POST /silent')) return
  connection.socket.write('e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n')
})
const client = createUpstreamClient()
afterAll(() => {
  client.close()
  server.stop()
})

describe('own client: the stream relay is fed from its raw body', () => {
  test('a native stream is framed from the raw body, events whole across chunks', async () => {
    const response = await client.fetch(`${server.url}/v1`, { method: 'POST', body: '{}' })
    const pulled = rawBodyOf(response)
    expect(pulled).toBeDefined()
    expect(upstreamBodyOf(response)).toBe(pulled as NonNullable<typeof pulled>)
    const source = sseSource(upstreamBodyOf(response), 5000, () => undefined)
    const { items, failure } = await drainSource(source)
    expect(failure).toBeUndefined()
    expect(items.map((item) => item.data)).toEqual(['{"a":1}', '[DONE]'])
  })

  test('silence on the raw body fails the source with the idle timeout and closes the socket', async () => {
    const controller = new AbortController()
    const response = await client.fetch(`${server.url}/silent`, { method: 'POST', body: '{}', signal: controller.signal })
    let aborted = false
    const source = sseSource(upstreamBodyOf(response), 150, () => {
      aborted = true
      controller.abort()
    })
    const { items, failure } = await drainSource(source)
    expect(items.map((item) => item.data)).toEqual(['{"a":1}'])
    expect(failure).toBeInstanceOf(StreamIdleTimeoutError)
    expect(aborted).toBe(true)
    for (let i = 0; i < 50 && !server.connections.at(-1)?.closed; i++) await Bun.sleep(10)
    expect(server.connections.at(-1)?.closed).toBe(true)
  })

  test('a response from the global fetch is read through its body stream', async () => {
    const response = await fetch(`${server.url}/v1`, { method: 'POST', body: '{}' })
    expect(rawBodyOf(response)).toBeUndefined()
    const body = upstreamBodyOf(response)
    let text = ''
    for (let chunk = await body.read(); chunk !== undefined; chunk = await body.read()) text += new TextDecoder().decode(chunk)
    expect(text).toBe('data: {"a":1}\n\n\ndata: [DONE]\n\n')
  })

  test('once response.body was read, the raw body is no longer offered', async () => {
    const response = await client.fetch(`${server.url}/v1`, { method: 'POST', body: '{}' })
    await response.text()
    expect(rawBodyOf(response)).toBeUndefined()
  })
})
