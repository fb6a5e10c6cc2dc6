import { describe, expect, test } from 'bun:test'
import { ServiceUnavailableError } from '../../src/errors/kinds'
import { asGatewayError } from '../../src/errors/render'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, type Reply } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

describe('database errors as the client sees them', () => {
  const withCode = (code: string) => Object.assign(new Error(`failed: ${code}`), { code })
  const wrapped = (code: string) => new Error('Failed query: select …', { cause: withCode(code) })

  test('an unreachable database is 503 service_unavailable with Retry-After', () => {
    for (const error of [
      withCode('ECONNREFUSED'),
      withCode('ECONNRESET'),
      withCode('CONNECTION_CLOSED'),
      wrapped('08006'),
      wrapped('57P01'),
      wrapped('57P02'),
      wrapped('57P03'),
      wrapped('53300'),
      wrapped('53100'),
      // "the database system is not accepting connections", a lock not granted in time, a read-only server, the server's statement_timeout
      wrapped('55000'),
      wrapped('55P03'),
      wrapped('25006'),
      wrapped('57014'),
      withCode('STATEMENT_DEADLINE'),
    ]) {
      const mapped = asGatewayError(error)
      expect(mapped).toBeInstanceOf(ServiceUnavailableError)
      expect(mapped.status).toBe(503)
      expect(mapped.code).toBe('service_unavailable')
      expect(mapped.type).toBe('overloaded_error')
      expect(Number(mapped.headers['retry-after'])).toBeGreaterThan(0)
      // The statement and its parameters stay out of what the client reads.
      expect(mapped.message).not.toContain('select')
    }
  })

  test('a statement the database refused for what it is stays a 500: that is a bug', () => {
    for (const error of [wrapped('42601'), wrapped('23505'), new Error('plain bug')]) {
      expect(asGatewayError(error).status).toBe(500)
    }
  })
})

/**
 * The database goes away: every route that needs it (billable calls, the wallet, an API key
 * not looked up in the last seconds, readiness) answers 503 with Retry-After, never 500, and
 * the gateway serves again by itself once the database is back. On Postgres the outage is a
 * real one (a TCP proxy in front of the server is cut); on the embedded database every
 * statement is made to fail.
 */
for (const kind of testDatabases) {
  describe(`database outage (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { interruptible: { every: true } })
    const outage = { start: () => suite.connection.cut(), end: () => suite.connection.restore() }

    const chat = (key: string) =>
      suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] } })
    const messages = (key: string) =>
      suite.harness.call('POST', '/v1/messages', {
        headers: { 'x-api-key': key },
        body: { model: 'anthropic/claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      })
    const wallet = (key: string) => suite.harness.call('GET', '/v1/wallet', { headers: bearer(key) })
    const expectUnavailable = (reply: Reply, surface: 'openai' | 'messages' = 'openai') => {
      expectError(reply, 503, 'service_unavailable', surface)
      expect(reply.json.error.type).toBe('overloaded_error')
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0)
    }

    /** The driver reconnects on its own; it is given a moment after the network returns. */
    const readyAgain = async (): Promise<Reply> => {
      for (let attempt = 0; ; attempt++) {
        const ready = await suite.harness.call('GET', '/v1/readyz')
        if (ready.status === 200 || attempt >= 50) return ready
        await Bun.sleep(100)
      }
    }

    test('billable and wallet routes answer 503 with Retry-After, readiness 503; all recover when the database returns', async () => {
      // One key the gateway has just looked up (cached for a few seconds), one it has never seen.
      const { key: known } = await suite.harness.key()
      const { key: unseen } = await suite.harness.key()
      expect((await wallet(known)).status).toBe(200)
      suite.upstream.reset()
      outage.start()
      try {
        expectUnavailable(await chat(known))
        expectUnavailable(await chat(unseen))
        expectUnavailable(await wallet(known))
        expectUnavailable(await wallet(unseen))
        expectUnavailable(await messages(known), 'messages')
        const ready = await suite.harness.call('GET', '/v1/readyz')
        expect(ready.status).toBe(503)
        expect(ready.json).toMatchObject({ status: 'not_ready', database: 'unreachable' })
        expect(ready.headers.get('retry-after')).not.toBeNull()
        // Nothing was sent upstream for calls that could not be held.
        expect(suite.upstream.received).toHaveLength(0)
      } finally {
        outage.end()
      }
      expect((await readyAgain()).status).toBe(200)
      expect((await chat(known)).status).toBe(200)
      expect((await chat(unseen)).status).toBe(200)
      expect((await wallet(unseen)).status).toBe(200)
      expect((await messages(known)).status).toBe(200)
    }, 60_000)

    test('an outage is not logged as a bug, request by request', async () => {
      const { key } = await suite.harness.key()
      const traces: string[] = []
      const original = console.error
      console.error = (...parts: unknown[]) => void traces.push(parts.map(String).join(' '))
      outage.start()
      try {
        for (let i = 0; i < 5; i++) expectUnavailable(await chat(key))
      } finally {
        outage.end()
        console.error = original
      }
      expect((await readyAgain()).status).toBe(200)
      expect((await chat(key)).status).toBe(200)
      expect(traces.filter((line) => line.includes('unhandled error'))).toHaveLength(0)
      expect(traces.filter((line) => line.includes('database unavailable')).length).toBeLessThanOrEqual(1)
    }, 30_000)
  })
}
