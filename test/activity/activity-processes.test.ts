import { describe, expect, test } from 'bun:test'
import { inArray } from 'drizzle-orm'
import { requestActivity } from '../../src/db/activity-schema'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

const chat = { model: 'test/cheap', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 100 }
const postgres = testDatabases.find((candidate) => candidate.kind === 'postgres')

/**
 * Request activity as operators run the gateway (docs/operations.md#request-activity): two
 * worker processes on Postgres, each writing its own records, stopped by SIGTERM right after a
 * burst of calls: what was still queued is written during the shutdown, each record once.
 */
describe.skipIf(!postgres)('request activity of worker processes stopped right after their calls', () => {
  const suite = gatewaySuite(postgres as NonNullable<typeof postgres>)

  test('every call answered before SIGTERM has its record, written once', async () => {
    suite.upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 20 } })
    const gateway = await suite.process({ TOLLGATE_WORKERS: '2' })
    const { key, id: keyId } = await suite.harness.key()
    const replies = await Promise.all(
      Array.from({ length: 40 }, () =>
        fetch(`${gateway.url}v1/chat/completions`, {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: JSON.stringify(chat),
        }),
      ),
    )
    expect(replies.map((reply) => reply.status)).toEqual(Array(40).fill(200))
    const requestIds = replies.map((reply) => reply.headers.get('x-request-id') ?? '')
    expect(await gateway.stop('SIGTERM')).toBe(0)
    const rows = await suite.database.db
      .select({ requestId: requestActivity.requestId, keyId: requestActivity.keyId, status: requestActivity.status, cost: requestActivity.cost })
      .from(requestActivity)
      .where(inArray(requestActivity.requestId, requestIds))
    expect(rows.map((row) => row.requestId).sort()).toEqual([...requestIds].sort())
    for (const row of rows) expect(row).toMatchObject({ keyId, status: 200, cost: 50n })
  }, 60_000)
})
