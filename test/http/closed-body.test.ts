import { beforeAll, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * A client that closes its connection before its body has arrived left: the request ends as a
 * 499 (client_closed) in the request log, not as an unhandled error, whether the body was being
 * read whole (a small declared length) or chunk by chunk (a larger one).
 */
describe('a body cut off by the client', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true, secondUpstream: true })
  let key: string

  beforeAll(async () => {
    key = (await served.harness.key()).key
  })

  async function sendPartly(declared: number, sent: number): Promise<void> {
    const port = Number(new URL(served.origin).port)
    const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n\r\n`,
    )
    socket.write('{"model":"test/cheap","messages":['.padEnd(sent, ' '))
    await Bun.sleep(100)
    socket.end()
  }

  for (const [path, declared] of [
    ['read whole', 4_000],
    ['read in chunks', 200_000],
  ] as const) {
    test(`${path}: 499, never a 500`, async () => {
      const before = served.seen.length
      await sendPartly(declared, 1_000)
      for (let waited = 0; waited < 50 && served.seen.length === before; waited++) await Bun.sleep(20)
      expect(served.seen.slice(before)).toEqual(['POST /v1/chat/completions 499'])
      expect(served.upstream.received).toHaveLength(0)
    })
  }
})
