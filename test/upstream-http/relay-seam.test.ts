import { afterAll, describe, expect, test } from 'bun:test'
import { sseSource, upstreamBodyOf } from '../../src/dispatch/stream-sources'
import { StreamIdleTimeoutError } from '../../src/errors/kinds'
import { createUpstreamClient, pulledBodyOf } from '../../src/upstream-http/client'
import { rawServer } from './servers'

/**
 * The seam between the client and the relay: a response of the own client is read by the relay
 * through its pulled body (no ReadableStream), events framed across network chunks; silence on
 * it ends the read with the idle timeout and closes the upstream socket; a response from fetch
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

describe('own client: the stream relay reads its pulled body', () => {
  test('a native stream is framed from the pulled body, events whole across chunks', async () => {
    const response = await client.fetch(`${server.url}/v1`, { method: 'POST', body: '{}' })
    const pulled = pulledBodyOf(response)
    expect(pulled).toBeDefined()
    expect(upstreamBodyOf(response)).toBe(pulled as NonNullable<typeof pulled>)
    const source = sseSource(upstreamBodyOf(response), 5000, () => undefined)
    const data: string[] = []
    for (let items = await source.read(); items !== undefined; items = await source.read()) data.push(...items.map((item) => item.data))
    expect(data).toEqual(['{"a":1}', '[DONE]'])
  })

  test('silence on the pulled body ends the read with the idle timeout and closes the socket', async () => {
    const controller = new AbortController()
    const response = await client.fetch(`${server.url}/silent`, { method: 'POST', body: '{}', signal: controller.signal })
    let aborted = false
    const source = sseSource(upstreamBodyOf(response), 150, () => {
      aborted = true
      controller.abort()
    })
    const first: string[] = []
    let failure: unknown
    try {
      for (let items = await source.read(); items !== undefined; items = await source.read()) first.push(...items.map((item) => item.data))
    } catch (error) {
      failure = error
    }
    expect(first).toEqual(['{"a":1}'])
    expect(failure).toBeInstanceOf(StreamIdleTimeoutError)
    expect(aborted).toBe(true)
    for (let i = 0; i < 50 && !server.connections.at(-1)?.closed; i++) await Bun.sleep(10)
    expect(server.connections.at(-1)?.closed).toBe(true)
  })

  test('a response from the global fetch is read through its body stream', async () => {
    const response = await fetch(`${server.url}/v1`, { method: 'POST', body: '{}' })
    expect(pulledBodyOf(response)).toBeUndefined()
    const body = upstreamBodyOf(response)
    let text = ''
    for (let chunk = await body.read(); chunk !== undefined; chunk = await body.read()) text += new TextDecoder().decode(chunk)
    expect(text).toBe('data: {"a":1}\n\n\ndata: [DONE]\n\n')
  })

  test('once response.body was read, the pulled body is no longer offered', async () => {
    const response = await client.fetch(`${server.url}/v1`, { method: 'POST', body: '{}' })
    await response.text()
    expect(pulledBodyOf(response)).toBeUndefined()
  })
})
