import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import { asc, sql } from 'drizzle-orm'
import { loadConfig } from '../../src/config/config'
import { ConfigError } from '../../src/config/config-error'
import { requestActivity } from '../../src/db/activity-schema'
import type { ActivityRow } from '../../src/observability/activity-row'
import { ActivityWriter } from '../../src/observability/activity-writer'
import { registry } from '../../src/observability/metrics'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { parseExposition, sampleValue } from '../support/exposition'
import { bearer, startGateway, testConfig } from '../support/gateway'
import { type InterruptibleDatabase, interruptible } from '../support/interruptible-database'

const DAY_MS = 24 * 60 * 60 * 1000

function row(requestId: string, createdAt: number): ActivityRow {
  return { requestId, createdAt: new Date(createdAt), method: 'POST', route: '/v1/chat/completions', status: 200, attempts: [], cost: 0n, durationMs: 1 }
}

/** Never on its own: a test writes with `flush`, so nothing depends on the writer's timers. */
const BY_HAND = { gatherMs: 60_000, batchSize: 1000 }

const droppedSoFar = () => sampleValue(parseExposition(registry.render()), 'tollgate_activity_dropped_total')

/**
 * The activity writer (docs/operations.md#request-activity) against a real database: bounded
 * queue, retried inserts, records written once, old ones deleted in bounded batches.
 */
for (const kind of testDatabases) {
  describe(`activity writer on ${kind.kind}`, () => {
    let database: FreshDatabase
    let connection: InterruptibleDatabase
    beforeAll(async () => {
      database = await kind.open()
      connection = await interruptible(database, { every: true })
    }, 30_000)
    afterAll(async () => {
      await connection.close()
      await database.close()
    }, 30_000)

    const stored = async () =>
      (await database.db.select({ id: requestActivity.requestId }).from(requestActivity).orderBy(asc(requestActivity.requestId))).map((entry) => entry.id)

    test('while the database is away the queue keeps the newest records up to its capacity; they are written once it is back', async () => {
      const now = Date.now()
      const writer = new ActivityWriter(connection.handle.db, { now: () => now, retentionDays: 30, capacity: 5, ...BY_HAND })
      const dropped = droppedSoFar()
      const logged = spyOn(console, 'error').mockImplementation(() => {})
      try {
        connection.cut()
        for (let index = 0; index < 8; index++) writer.add(row(`req_queue_${index}`, now))
        expect(writer.pending).toBe(5)
        expect(droppedSoFar() - dropped).toBe(3)
        await writer.flush()
        expect(writer.pending).toBe(5)
        const lines = logged.mock.calls.map((call) => JSON.parse(String(call[0])))
        expect(lines.filter((line) => line.message.startsWith('request activity queue full'))).toHaveLength(1)
        expect(lines.find((line) => line.message === 'request activity not written; retrying')).toMatchObject({ level: 'warn', records: 5 })
      } finally {
        connection.restore()
        logged.mockRestore()
      }
      await writer.flush()
      expect(writer.pending).toBe(0)
      expect((await stored()).filter((id) => id.startsWith('req_queue_'))).toEqual([3, 4, 5, 6, 7].map((index) => `req_queue_${index}`))
      writer.stop()
    })

    test('a record written twice (an insert whose answer was lost, retried) is stored once', async () => {
      const writer = new ActivityWriter(database.db, { now: Date.now, retentionDays: 30, ...BY_HAND })
      writer.add(row('req_twice', Date.now()))
      await writer.flush()
      writer.add(row('req_twice', Date.now()))
      await writer.flush()
      expect((await stored()).filter((id) => id === 'req_twice')).toHaveLength(1)
      writer.stop()
    })

    test('records past the retention are deleted after a write, a bounded batch per statement, the rest on the next write', async () => {
      const now = Date.parse('2026-06-01T00:00:00Z')
      await database.db.execute(sql`delete from request_activity`)
      const old = Array.from({ length: 25 }, (_, index) => row(`req_old_${String(index).padStart(2, '0')}`, now - 31 * DAY_MS - index))
      const recent = [row('req_recent_a', now - 29 * DAY_MS), row('req_recent_b', now - DAY_MS)]
      await database.db.insert(requestActivity).values([...old, ...recent])
      const writer = new ActivityWriter(database.db, { now: () => now, retentionDays: 30, retentionBatch: 2, ...BY_HAND })
      writer.add(row('req_new_1', now))
      await writer.flush()
      // Ten statements of two rows at most per look: five old records wait for the next write.
      expect((await stored()).filter((id) => id.startsWith('req_old_'))).toHaveLength(5)
      writer.add(row('req_new_2', now))
      await writer.flush()
      expect(await stored()).toEqual(['req_new_1', 'req_new_2', 'req_recent_a', 'req_recent_b'])
      writer.stop()
    })
  })
}

describe('TOLLGATE_ACTIVITY_RETENTION_DAYS', () => {
  test('a whole number of days, 30 unless set; anything else is refused naming the variable', () => {
    expect(loadConfig({}).activityRetentionDays).toBe(30)
    expect(loadConfig({ TOLLGATE_ACTIVITY_RETENTION_DAYS: '7' }).activityRetentionDays).toBe(7)
    expect(loadConfig({ TOLLGATE_ACTIVITY_RETENTION_DAYS: '0' }).activityRetentionDays).toBe(0)
    for (const value of ['-1', '1.5', 'week', '100000']) {
      expect(() => loadConfig({ TOLLGATE_ACTIVITY_RETENTION_DAYS: value })).toThrow(ConfigError)
      expect(() => loadConfig({ TOLLGATE_ACTIVITY_RETENTION_DAYS: value })).toThrow('TOLLGATE_ACTIVITY_RETENTION_DAYS')
    }
  })

  test('0 records nothing: requests are served, no record is queued or written', async () => {
    const database = await testDatabases[0]!.open()
    const harness = startGateway(database, { config: testConfig({ TOLLGATE_ACTIVITY_RETENTION_DAYS: '0' }) })
    try {
      const refused = await harness.call('POST', '/v1/chat/completions', { headers: bearer('tg_not_a_key'), body: { model: 'x', messages: [] } })
      expect(refused.status).toBe(401)
      const listed = await harness.admin('GET', '/requests')
      expect(listed.status).toBe(200)
      await harness.services.activity.flush()
      expect(harness.services.activity.pending).toBe(0)
      expect((await harness.admin('GET', '/requests')).json.data).toEqual([])
    } finally {
      harness.services.close()
      await database.close()
    }
  })
})
