import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'
import { mockCatalogEnv } from '../support/mock-catalog'

/**
 * A client that stops reading a fast stream: the gateway must stop reading the upstream too
 * (its socket paused until the client's connection drains), not buffer the whole answer in its
 * memory; once the client reads again, every chunk arrives, in order, and the stream is billed.
 * Real HTTP on both sides: an upstream that writes as fast as its socket takes, and a raw TCP
 * client that pauses its socket.
 */
const CHUNKS = 40_000
const CONTENT = 'x'.repeat(1000)
const chunkOf = (index: number) =>
  `data: {"id":"chatcmpl-slow","object":"chat.completion.chunk","created":1741569952,"model":"cheap-upstream","choices":[{"index":0,"delta":{"content":"${CONTENT}${index}"},"logprobs":null,"finish_reason":null}]}\n\n`
const LAST =
  'data: {"id":"chatcmpl-slow","object":"chat.completion.chunk","created":1741569952,"model":"cheap-upstream","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}\n\n' +
  'data: {"id":"chatcmpl-slow","object":"chat.completion.chunk","created":1741569952,"model":"cheap-upstream","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7}}\n\n' +
  'data: [DONE]\n\n'

let upstream: ReturnType<typeof Bun.serve>
let gateway: ReturnType<typeof Bun.serve>
/** Chunks the upstream's body handed to its server so far: it pulls only while its socket takes them. */
let produced = 0

beforeAll(async () => {
  const encoder = new TextEncoder()
  upstream = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => {
      produced = 0
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (produced === CHUNKS) {
              controller.enqueue(encoder.encode(LAST))
              controller.close()
              return
            }
            controller.enqueue(encoder.encode(chunkOf(produced++)))
          },
        },
        { highWaterMark: 0 },
      )
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
})
const suite = gatewaySuite(testDatabases[0]!, {
  mockUpstream: false,
  env: () => mockCatalogEnv(`http://127.0.0.1:${upstream.port}/v1`, `http://127.0.0.1:${upstream.port}/v1`),
})
beforeAll(() => {
  gateway = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => suite.harness.gateway.handle(request) })
})
afterAll(() => {
  gateway.stop(true)
  upstream.stop(true)
})

test('a client that stops reading stops the upstream; when it reads again, the whole stream arrives and is billed', async () => {
  const { key } = await suite.harness.key()
  const body = JSON.stringify({ model: 'test/cheap', stream: true, messages: [{ role: 'user', content: 'Write a lot.' }] })
  let received = 0
  let head = ''
  let text = ''
  const decoder = new TextDecoder()
  let ended: () => void = () => undefined
  const closed = new Promise<void>((resolve) => {
    ended = resolve
  })
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port: Number(gateway.port),
    socket: {
      data(client, bytes) {
        received += bytes.length
        if (head.length < 4096) head += bytes.toString('latin1').slice(0, 4096)
        // Keep only the tail: the whole answer is 40 MB.
        text = (text + decoder.decode(bytes, { stream: true })).slice(-4096)
        if (received > 64 * 1024 && !resumed) client.pause()
      },
      close: () => ended(),
    },
  })
  let resumed = false
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  )
  // The client has stopped reading; the kernel's buffers fill, then the upstream must stall.
  await Bun.sleep(1500)
  const stalledAt = produced
  await Bun.sleep(500)
  expect(produced).toBe(stalledAt)
  expect(stalledAt).toBeLessThan(CHUNKS / 2)

  resumed = true
  socket.resume()
  await closed
  expect(produced).toBe(CHUNKS)
  expect(received).toBeGreaterThan(CHUNKS * CONTENT.length)
  // The tail as the body reads once the chunked coding's size lines are out (an event holds no CRLF):
  // where the server cuts its chunks is its own business.
  const tail = text.replace(/\r\n[0-9a-f]+\r\n/g, '')
  expect(tail).toContain(`${CONTENT}${CHUNKS - 1}"`)
  expect(tail).toContain('data: [DONE]')
  // Billed from the provider's usage once the stream ended, and the books balance.
  const requestId = /x-request-id: (\S+)/i.exec(head)?.[1]
  expect(requestId).toBeDefined()
  let charge: { amount: number } | undefined
  for (let waited = 0; !charge && waited < 3000; waited += 20) {
    charge = ((await suite.harness.admin('GET', `/ledger?request_id=${requestId}`)).json.data as { kind: string; amount: number }[]).find(
      (entry) => entry.kind === 'charge',
    )
    if (!charge) await Bun.sleep(20)
  }
  expect(charge?.amount).toBe((5 * 1 + 7 * 2) / 1e6)
  await expectBooksBalance(suite.database.db)
}, 30_000)
