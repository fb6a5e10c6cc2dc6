import { afterAll, describe, expect, test } from 'bun:test'
import { createUpstreamClient, rawBodyOf } from '../../src/upstream-http/client'
import type { UpstreamNetworkError } from '../../src/upstream-http/errors'
import { rejectionOf } from '../support/rejection'
import { rawServer } from './servers'

/**
 * Every wait on an upstream ends: an abort at any point (before the socket, connecting, waiting
 * for the head, reading the body) rejects with the signal's reason, as fetch does, and closes
 * the socket; a connect that does not complete gives up at the connect timeout.
 */
const silent = rawServer(() => undefined)
const streaming = rawServer((connection) => {
  connection.socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n6\r\ndata: \r\n')
})
const client = createUpstreamClient({ connectTimeoutMs: 300 })
afterAll(() => {
  client.close()
  silent.stop()
  streaming.stop()
})

async function closedByClient(connections: { closed: boolean }[]): Promise<boolean> {
  for (let i = 0; i < 50 && !connections.at(-1)?.closed; i++) await Bun.sleep(10)
  return connections.at(-1)?.closed === true
}

describe('own client: aborts and deadlines', () => {
  test('an abort while waiting for the head rejects with AbortError and closes the socket', async () => {
    const controller = new AbortController()
    const call = client.fetch(silent.url, { method: 'POST', body: '{}', signal: controller.signal })
    for (let i = 0; i < 50 && silent.requests === 0; i++) await Bun.sleep(5)
    controller.abort()
    const error = await rejectionOf(call)
    expect((error as Error).name).toBe('AbortError')
    expect(await closedByClient(silent.connections)).toBe(true)
  })

  test('AbortSignal.timeout rejects with TimeoutError, as fetch does', async () => {
    const error = await rejectionOf(client.fetch(silent.url, { method: 'POST', body: '{}', signal: AbortSignal.timeout(50) }))
    expect((error as Error).name).toBe('TimeoutError')
  })

  test('an abort while the body is read fails the pending read and closes the socket', async () => {
    const controller = new AbortController()
    const response = await client.fetch(streaming.url, { method: 'POST', body: '{}', signal: controller.signal })
    const pulled = rawBodyOf(response)
    if (!pulled) throw new Error('no pulled body')
    expect(new TextDecoder().decode(await pulled.read())).toBe('data: ')
    const pending = pulled.read()
    controller.abort()
    expect(((await rejectionOf(pending)) as Error).name).toBe('AbortError')
    expect(await closedByClient(streaming.connections)).toBe(true)
  })

  test('an already aborted signal rejects without connecting', async () => {
    const before = silent.connections.length
    const error = await rejectionOf(client.fetch(silent.url, { method: 'POST', body: '{}', signal: AbortSignal.abort() }))
    expect((error as Error).name).toBe('AbortError')
    expect(silent.connections.length).toBe(before)
  })

  test('a TLS handshake that never completes gives up at the connect timeout (ETIMEDOUT)', async () => {
    // The raw server accepts the TCP connection and never answers the TLS hello.
    const error = await rejectionOf(client.fetch(`https://127.0.0.1:${silent.port}/v1`, { method: 'POST', body: '{}' }))
    expect(error).toBeInstanceOf(TypeError)
    expect((error as UpstreamNetworkError).code).toBe('ETIMEDOUT')
    expect(await closedByClient(silent.connections)).toBe(true)
  })

  test('an abort while connecting rejects with AbortError', async () => {
    const controller = new AbortController()
    const call = client.fetch(`https://127.0.0.1:${silent.port}/v1`, { method: 'POST', body: '{}', signal: controller.signal })
    setTimeout(() => controller.abort(), 30)
    expect(((await rejectionOf(call)) as Error).name).toBe('AbortError')
  })

  test('a refused connection is a network error (TypeError) with its code', async () => {
    const closed = rawServer(() => undefined)
    const port = closed.port
    closed.stop()
    const error = await rejectionOf(client.fetch(`http://127.0.0.1:${port}/v1`, { method: 'POST', body: '{}' }))
    expect(error).toBeInstanceOf(TypeError)
    expect((error as UpstreamNetworkError).code).toBe('ECONNREFUSED')
  })
})
