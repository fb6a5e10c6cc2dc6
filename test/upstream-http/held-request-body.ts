import { heapStats } from 'bun:jsc'
import { createUpstreamClient, rawBodyOf } from '../../src/upstream-http/client'

/**
 * Run as its own process by piped-body.test.ts: what the own client still holds, once an
 * 8 MiB request was sent and its answer's stream stays open. A process of its own, because the
 * heap of a test runner that ran other files meanwhile grows with their leftovers. Prints
 * `{ size, held, heard }` as JSON.
 */
const size = 8 * 1024 * 1024
const encoder = new TextEncoder()
const event = 'data: 1\n\n'
const answer = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${encoder.encode(event).length.toString(16)}\r\n${event}\r\n`

// A server that reads the request to its end, then answers one event and stays open, keeping none of it.
let received = 0
const listener = Bun.listen({
  hostname: '127.0.0.1',
  port: 0,
  socket: {
    data(socket, bytes) {
      received += bytes.length
      if (received >= size) socket.write(answer)
    },
  },
})
const client = createUpstreamClient()
const heldBytes = () => {
  Bun.gc(true)
  const stats = heapStats()
  return stats.heapSize + stats.extraMemorySize
}

const before = heldBytes()
let heard = ''
// The body is made and dropped in here: only the client could still hold it.
const open = async () => {
  const response = await client.fetch(`http://127.0.0.1:${listener.port}/v1`, { method: 'POST', body: new Uint8Array(size).fill(120) })
  const raw = rawBodyOf(response)
  if (!raw) throw new Error('the own client attached no raw body')
  const decoder = new TextDecoder()
  raw.pipe({
    bytes: (chunk) => {
      heard += decoder.decode(chunk, { stream: true })
    },
    end: () => {},
    fail: () => {},
  })
}
await open()
for (let i = 0; i < 50 && heard === ''; i++) await Bun.sleep(10)
// Collected from a fresh stack a few times: the collector also scans stacks conservatively, and a stale word there may keep a buffer one collection longer.
let held = heldBytes() - before
for (let attempt = 0; attempt < 20 && held >= size / 4; attempt++) {
  await Bun.sleep(50)
  held = heldBytes() - before
}
console.log(JSON.stringify({ size, held, heard }))
client.close()
listener.stop(true)
