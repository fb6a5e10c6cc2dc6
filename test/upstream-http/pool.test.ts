import { afterEach, describe, expect, test } from 'bun:test'
import { createUpstreamClient, rawBodyOf, type UpstreamClient } from '../../src/upstream-http/client'
import { rejectionOf } from '../support/rejection'
import { rawServer, readPulled } from './servers'

/**
 * Keep-alive: a socket is reused only after its response was read to the end and the server
 * did not say `connection: close`; the pool bounds sockets per origin; idle sockets close; a POST
 * that may have reached the server is never sent twice.
 */
const OK = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'
const stops: (() => void)[] = []
afterEach(() => {
  for (const stop of stops.splice(0)) stop()
})

function clientOf(options: Parameters<typeof createUpstreamClient>[0] = {}): UpstreamClient {
  const client = createUpstreamClient(options)
  stops.push(() => client.close())
  return client
}

function serverOf(onRequest: Parameters<typeof rawServer>[0]) {
  const server = rawServer(onRequest)
  stops.push(server.stop)
  return server
}

const post = (client: UpstreamClient, url: string) => client.fetch(url, { method: 'POST', body: '{"a":1}' })

describe('own client: keep-alive pool', () => {
  test('sequential calls share one socket once each answer was read', async () => {
    const server = serverOf((connection) => {
      connection.socket.write(OK)
    })
    const client = clientOf()
    for (let i = 0; i < 5; i++) expect(await (await post(client, server.url)).text()).toBe('ok')
    expect(server.connections.length).toBe(1)
    expect(server.requests).toBe(5)
  })

  test('a socket whose answer was not read yet is not lent to the next call', async () => {
    const server = serverOf((connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n')
      setTimeout(() => connection.socket.write('0\r\n\r\n'), 30)
    })
    const client = clientOf()
    const first = await post(client, server.url)
    const second = await post(client, server.url)
    expect(server.connections.length).toBe(2)
    expect(await first.text()).toBe('ok')
    expect(await second.text()).toBe('ok')
    await post(client, server.url).then((response) => response.text())
    expect(server.connections.length).toBe(2)
  })

  test('connection: close and HTTP/1.0 answers are not reused', async () => {
    const server = serverOf((connection, _request, index) => {
      connection.socket.write(
        index % 2 === 0 ? 'HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok' : 'HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok',
      )
    })
    const client = clientOf()
    for (let i = 0; i < 4; i++) expect(await (await post(client, server.url)).text()).toBe('ok')
    expect(server.connections.length).toBe(4)
  })

  test('a cancelled body closes its socket instead of returning it', async () => {
    const server = serverOf((connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n')
    })
    const client = clientOf()
    const pulled = rawBodyOf(await post(client, server.url))
    expect(new TextDecoder().decode(await pulled?.read())).toBe('ok')
    pulled?.cancel()
    for (let i = 0; i < 50 && !server.connections[0]?.closed; i++) await Bun.sleep(10)
    expect(server.connections[0]?.closed).toBe(true)
  })

  test('at the per-origin limit a call waits for a socket to come free', async () => {
    const server = serverOf((connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n')
      setTimeout(() => connection.socket.write('0\r\n\r\n'), 100)
    })
    const client = clientOf({ maxSocketsPerOrigin: 1 })
    const first = await post(client, server.url)
    let secondAnswered = false
    const second = post(client, server.url).then((response) => {
      secondAnswered = true
      return response
    })
    await Bun.sleep(50)
    expect(secondAnswered).toBe(false)
    expect(server.requests).toBe(1)
    expect(await first.text()).toBe('ok')
    expect(await (await second).text()).toBe('ok')
    expect(server.connections.length).toBe(1)
  })

  test('a call waiting at the limit is released by its abort', async () => {
    const server = serverOf((connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n')
    })
    const client = clientOf({ maxSocketsPerOrigin: 1 })
    await post(client, server.url)
    const controller = new AbortController()
    const waiting = client.fetch(server.url, { method: 'POST', body: '{}', signal: controller.signal })
    controller.abort()
    expect(((await rejectionOf(waiting)) as Error).name).toBe('AbortError')
    expect(server.requests).toBe(1)
  })

  test('an idle socket is closed after the idle timeout', async () => {
    const server = serverOf((connection) => {
      connection.socket.write(OK)
    })
    const client = clientOf({ idleTimeoutMs: 1000 })
    await (await post(client, server.url)).text()
    expect(server.connections[0]?.closed).toBe(false)
    for (let i = 0; i < 40 && !server.connections[0]?.closed; i++) await Bun.sleep(100)
    expect(server.connections[0]?.closed).toBe(true)
  })

  test('an idle socket the server closed is not used again; the next call opens a fresh one', async () => {
    const server = serverOf((connection) => {
      connection.socket.write(OK)
      setTimeout(() => connection.socket.end(), 20)
    })
    const client = clientOf()
    expect(await (await post(client, server.url)).text()).toBe('ok')
    await Bun.sleep(100)
    expect(await (await post(client, server.url)).text()).toBe('ok')
    expect(server.connections.length).toBe(2)
  })

  test('a POST a reused socket took but never answered is not sent again; a GET is, once', async () => {
    // Answers the first request of each connection; hangs up on the second without a word.
    const server = serverOf((connection, request) => {
      const onThisSocket = connection.received.split('HTTP/1.1\r\n').length - 1
      if (onThisSocket === 1) connection.socket.write(OK)
      else connection.socket.end()
      void request
    })
    const client = clientOf()
    expect(await (await post(client, server.url)).text()).toBe('ok')
    const error = await rejectionOf(post(client, server.url))
    expect(error).toBeInstanceOf(TypeError)
    expect(server.requests).toBe(2)

    expect(await (await client.fetch(server.url, { method: 'GET' })).text()).toBe('ok')
    expect(await (await client.fetch(server.url, { method: 'GET' })).text()).toBe('ok')
    // The second GET went unanswered on the reused socket and was sent once more on a new one.
    expect(server.requests).toBe(5)
  })

  test('a pulled body and a whole body read the same bytes from a pooled socket', async () => {
    const server = serverOf((connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n')
    })
    const client = clientOf()
    const pulled = rawBodyOf(await post(client, server.url))
    expect(await readPulled(pulled as NonNullable<typeof pulled>)).toBe('abcdef')
    expect(await (await post(client, server.url)).text()).toBe('abcdef')
    expect(server.connections.length).toBe(1)
  })
})
