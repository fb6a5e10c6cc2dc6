import { describe, expect, spyOn, test } from 'bun:test'
import { recordOf } from '../support/activity'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

const chat = { model: 'test/cheap', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 100 }

/**
 * Request activity through a database outage (docs/operations.md#request-activity): calls the
 * gateway can serve without the database (from a credit lease) are answered while their records
 * wait in memory, and the records are written once the database is back; the ledger has every
 * charge.
 */
for (const kind of testDatabases) {
  describe(`request activity through a database outage (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { env: { TOLLGATE_CREDIT_LEASE: undefined }, gateway: false })

    test('calls are served while records cannot be written; every record is written once the database is back', async () => {
      const connection = await suite.cuttableConnection({ every: true })
      const gateway = suite.instance({ handle: connection.handle })
      suite.upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
      const { key } = await gateway.key()
      const send = () => gateway.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat })
      // Warm: the key is known and a credit lease is open, so calls need no statement for a while.
      expect((await send()).status).toBe(200)
      await gateway.services.activity.flush()
      expect(gateway.services.activity.pending).toBe(0)

      const logged = spyOn(console, 'error').mockImplementation(() => {})
      let during: string[]
      try {
        connection.cut()
        const replies = await Promise.all(Array.from({ length: 5 }, send))
        expect(replies.map((reply) => reply.status)).toEqual(Array(5).fill(200))
        during = replies.map((reply) => reply.headers.get('x-request-id') ?? '')
        // The insert fails: the records stay queued, and the writer says it will retry.
        await gateway.services.activity.flush()
        expect(gateway.services.activity.pending).toBe(5)
        expect(logged.mock.calls.map((call) => String(call[0])).some((line) => line.includes('request activity not written'))).toBe(true)
      } finally {
        connection.restore()
        logged.mockRestore()
      }
      await gateway.services.activity.flush()
      expect(gateway.services.activity.pending).toBe(0)
      expect(await gateway.services.holds.landPending(10_000)).toBe(true)
      for (const requestId of during) {
        const record = await recordOf(gateway, requestId)
        expect(record).toMatchObject({ status: 200, error_code: null, key_id: expect.any(String), model: 'test/cheap', tokens: { input: 10, output: 20 } })
        expect(record.ledger.filter((entry: any) => entry.kind === 'charge').map((entry: any) => entry.amount)).toEqual([record.cost])
      }
    }, 60_000)
  })
}
