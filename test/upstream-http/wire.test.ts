import { afterAll, describe, expect, test } from 'bun:test'
import { createUpstreamClient, rawBodyOf } from '../../src/upstream-http/client'
import { UpstreamNetworkError } from '../../src/upstream-http/errors'
import { MAX_HEAD_BYTES } from '../../src/upstream-http/response-head'
import { rejectionOf } from '../support/rejection'
import { type RawConnection, rawServer, readPulled } from './servers'

/**
 * The wire's edge cases against a raw TCP server that writes exactly the bytes each test
 * scripts: chunked bodies split anywhere, extensions and trailers, content-length bodies cut
 * short or overlong, read-until-close bodies, and the bounds that keep a hostile upstream from
 * growing memory. Each script is picked by the request's path.
 */
const scripts = new Map<string, (connection: RawConnection) => Promise<void> | void>()
const server = rawServer(async (connection, request) => {
  const path = request.slice(request.indexOf(' ') + 1, request.indexOf(' HTTP/1.1'))
  await scripts.get(path)?.(connection)
})
const client = createUpstreamClient()
afterAll(() => {
  client.close()
  server.stop()
})

/** Writes `parts` one by one, a few ms apart, so each lands as its own network chunk. */
async function writeApart(connection: RawConnection, parts: string[]): Promise<void> {
  for (const part of parts) {
    connection.socket.write(part)
    connection.socket.flush()
    await Bun.sleep(3)
  }
}

function script(path: string, run: (connection: RawConnection) => Promise<void> | void): string {
  scripts.set(path, run)
  return `${server.url}${path}`
}

const post = (url: string) => client.fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })

describe('own client: response bodies on the wire', () => {
  test('a chunked body split at every byte boundary reads whole, through the pulled body and through response.body', async () => {
    const wire = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\ntrailer-field: x\r\n\r\n'
    const url = script('/bytewise', (connection) => writeApart(connection, wire.split('')))
    const pulled = rawBodyOf(await post(url))
    expect(pulled).toBeDefined()
    expect(await readPulled(pulled as NonNullable<typeof pulled>)).toBe('hello, world')
    expect(await (await post(url)).text()).toBe('hello, world')
  })

  test('chunks coalesced into one packet with an extension and upper-case hex read as one', async () => {
    const url = script('/coalesced', (connection) => {
      connection.socket.write(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nA;ext\r\n${'a'.repeat(10)}\r\n1a\r\n${'b'.repeat(26)}\r\n0\r\n\r\n`)
    })
    expect(await (await post(url)).text()).toBe(`${'a'.repeat(10)}${'b'.repeat(26)}`)
  })

  test('a chunk size that is not hex fails the read with a protocol error', async () => {
    const url = script('/bad-hex', (connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nmore\r\n0\r\n\r\n')
    })
    const error = await rejectionOf((await post(url)).text())
    expect(error).toBeInstanceOf(UpstreamNetworkError)
    expect((error as UpstreamNetworkError).code).toBe('EPROTO')
  })

  test('a chunk-size line that never ends is cut at its bound, not buffered', async () => {
    const url = script('/endless-size', async (connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1')
      for (let i = 0; i < 20 && !connection.closed; i++) {
        connection.socket.write(';'.padEnd(1024, 'x'))
        await Bun.sleep(2)
      }
    })
    const error = await rejectionOf((await post(url)).text())
    expect((error as UpstreamNetworkError).code).toBe('EPROTO')
  })

  test('a head past 64 KB fails with a protocol error', async () => {
    const url = script('/huge-head', (connection) => {
      connection.socket.write(`HTTP/1.1 200 OK\r\nx-big: ${'y'.repeat(MAX_HEAD_BYTES)}\r\ncontent-length: 0\r\n\r\n`)
    })
    const error = await rejectionOf(post(url))
    expect(error).toBeInstanceOf(TypeError)
    expect((error as UpstreamNetworkError).code).toBe('EPROTO')
  })

  test('a content-length body arrives whole even split across packets', async () => {
    const url = script('/length', (connection) => writeApart(connection, ['HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhel', 'lo wo', 'rld']))
    expect(await (await post(url)).text()).toBe('hello world')
  })

  test('a server closing before content-length is met fails the body (ECONNRESET)', async () => {
    const url = script('/short', (connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this')
      connection.socket.end()
    })
    const error = await rejectionOf((await post(url)).text())
    expect((error as UpstreamNetworkError).code).toBe('ECONNRESET')
  })

  test('bytes past content-length are not body, and that socket is not reused', async () => {
    const url = script('/overlong', (connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloEXTRA')
    })
    const before = server.connections.length
    expect(await (await post(url)).text()).toBe('hello')
    expect(await (await post(url)).text()).toBe('hello')
    expect(server.connections.length - before).toBe(2)
  })

  test('without length or chunking, the body runs until the server closes', async () => {
    const url = script('/until-close', async (connection) => {
      await writeApart(connection, ['HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nfirst ', 'second'])
      connection.socket.end()
    })
    expect(await (await post(url)).text()).toBe('first second')
  })

  test('a server closing mid-way through a chunked stream fails the read after what it sent', async () => {
    const url = script('/cut', async (connection) => {
      await writeApart(connection, ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n', '6\r\ndata: \r\n'])
      connection.socket.end()
    })
    const pulled = rawBodyOf(await post(url))
    if (!pulled) throw new Error('no pulled body')
    expect(new TextDecoder().decode(await pulled.read())).toBe('data: ')
    expect(((await rejectionOf(pulled.read())) as UpstreamNetworkError).code).toBe('ECONNRESET')
  })

  test('a server closing before any answer is a network error (TypeError), as with fetch', async () => {
    const url = script('/hang-up', (connection) => {
      connection.socket.end()
    })
    const error = await rejectionOf(post(url))
    expect(error).toBeInstanceOf(TypeError)
    expect((error as UpstreamNetworkError).code).toBe('ECONNRESET')
  })

  test('interim 1xx heads are read past; 204 has a null body; status text and repeated headers are kept', async () => {
    const url = script('/interim', (connection) => {
      connection.socket.write(
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 204 Nothing Here\r\nx-a: 1\r\nx-a: 2\r\n\r\n',
      )
    })
    const response = await post(url)
    expect(response.status).toBe(204)
    expect(response.statusText).toBe('Nothing Here')
    expect(response.headers.get('x-a')).toBe('1, 2')
    expect(response.body).toBeNull()
  })

  test('a malformed status line or header line is a protocol error, not a guess', async () => {
    const badStatus = script('/bad-status', (connection) => {
      connection.socket.write('HTTP/2 200 OK\r\ncontent-length: 0\r\n\r\n')
    })
    const folded = script('/folded', (connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\nx-a: 1\r\n  folded\r\ncontent-length: 0\r\n\r\n')
    })
    const conflicting = script('/two-lengths', (connection) => {
      connection.socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello!')
    })
    for (const url of [badStatus, folded, conflicting]) expect(((await rejectionOf(post(url))) as UpstreamNetworkError).code).toBe('EPROTO')
  })

  test('a body far past the read-ahead bound arrives intact when read late (the socket pauses, then resumes)', async () => {
    const size = 4 * 1024 * 1024
    const payload = new Uint8Array(size)
    for (let block = 0; block < size / (64 * 1024); block++) payload.fill(block % 251, block * 64 * 1024, (block + 1) * 64 * 1024)
    // Bun.serve writes the large body with its own backpressure; the raw server would not.
    const large = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(payload) })
    const response = await post(`http://127.0.0.1:${large.port}/large`)
    await Bun.sleep(200)
    const bytes = new Uint8Array(await response.arrayBuffer())
    large.stop(true)
    expect(bytes.length).toBe(size)
    let wrong = 0
    for (let block = 0; block < size / (64 * 1024); block++)
      if (bytes[block * 64 * 1024] !== block % 251 || bytes[(block + 1) * 64 * 1024 - 1] !== block % 251) wrong++
    expect(wrong).toBe(0)
  })

  test('a gzip answer (sent although identity was asked) is decoded as fetch would', async () => {
    const compressed = Bun.gzipSync(Buffer.from('{"ok":true}'))
    const url = script('/gzip', (connection) => {
      connection.socket.write(`HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${compressed.length}\r\n\r\n`)
      connection.socket.write(compressed)
    })
    const response = await post(url)
    expect(await response.json()).toEqual({ ok: true })
    expect(server.connections.at(-1)?.received).toContain('accept-encoding: identity')
  })
})
