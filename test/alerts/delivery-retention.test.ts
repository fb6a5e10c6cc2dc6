import { afterAll, describe, expect, spyOn, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { storeEvent } from '../../src/alerts/events'
import { DELIVERY_RETENTION_MS, WebhookSender } from '../../src/alerts/webhook-sender'
import { queryRows } from '../../src/db/rows'
import type { DeliveryStatus } from '../../src/db/schema'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'

const DAY = 24 * 60 * 60 * 1000
const HOUR = 60 * 60 * 1000

/** The delivery log's upkeep: finished deliveries go 30 days after their event, a bounded batch at a time, by the sender's clock. */
for (const kind of testDatabases) {
  describe(`webhook delivery retention on ${kind.kind}`, () => {
    const senders: WebhookSender[] = []
    // Registered before the suite's own, so it runs first: the senders stop before their database closes.
    afterAll(() => {
      for (const sender of senders) sender.stop()
    })
    const suite = gatewaySuite(kind, { mockUpstream: false })

    /** A webhook nobody listens on: nothing in these tests is due to be sent. */
    async function webhook(): Promise<string> {
      const created = await suite.harness.admin('POST', '/webhooks', { url: 'http://127.0.0.1:9/nobody', events: ['webhook.test'] })
      expect(created.status).toBe(201)
      return created.json.id
    }

    /** `count` events to the webhook at `at`, left in `status`; never due (a pending one waits a year). */
    async function events(webhookId: string, at: number, status: DeliveryStatus, count: number): Promise<string[]> {
      const ids: string[] = []
      for (let index = 0; index < count; index++)
        ids.push((await storeEvent(suite.database.db, 'webhook.test', { webhook_id: webhookId }, new Date(at), webhookId)).id)
      await suite.database.db.execute(
        sql`update webhook_deliveries set status = ${status}, next_attempt_at = ${new Date(at + 365 * DAY).toISOString()}::timestamptz
          where event_id in (${sql.join(
            ids.map((id) => sql`${id}`),
            sql`, `,
          )})`,
      )
      return ids
    }

    async function remaining(webhookId: string): Promise<string[]> {
      const rows = await queryRows<{ event_id: string }>(
        suite.database.db,
        sql`select event_id from webhook_deliveries where webhook_id = ${webhookId} order by event_id`,
      )
      return rows.map((row) => row.event_id)
    }

    function sender(clock: { now: number }, upkeepBatch?: number): WebhookSender {
      const made = new WebhookSender(suite.database.db, { now: () => clock.now, upkeepBatch })
      senders.push(made)
      return made
    }

    test('delivered and failed deliveries go after 30 days; pending and younger ones stay', async () => {
      const clock = { now: Date.now() }
      const hook = await webhook()
      const old = clock.now - DELIVERY_RETENTION_MS - HOUR
      const gone = [...(await events(hook, old, 'delivered', 2)), ...(await events(hook, old, 'failed', 2))]
      const kept = [
        ...(await events(hook, old, 'pending', 1)),
        ...(await events(hook, clock.now - DELIVERY_RETENTION_MS + HOUR, 'delivered', 1)),
        ...(await events(hook, clock.now - DAY, 'failed', 1)),
      ]
      await sender(clock).tick()
      expect(await remaining(hook)).toEqual([...kept].sort())
      expect(gone.every((id) => !kept.includes(id))).toBe(true)
      // The API's log agrees.
      const log = await suite.harness.admin('GET', `/webhooks/${hook}/deliveries`)
      expect(log.json.data.map((row: { id: string }) => row.id).sort()).toEqual([...kept].sort())
    })

    test('a backlog goes a bounded batch at a time; then the log is looked at again an hour later', async () => {
      const clock = { now: Date.now() }
      const hook = await webhook()
      const old = clock.now - DELIVERY_RETENTION_MS - DAY
      await events(hook, old, 'delivered', 25)
      const upkeep = sender(clock, 2)
      // Ten statements of two rows: twenty rows in the first tick, the other five in the next.
      await upkeep.tick()
      expect(await remaining(hook)).toHaveLength(5)
      await upkeep.tick()
      expect(await remaining(hook)).toHaveLength(0)
      // Done: the next look is an hour away by the sender's clock.
      const later = await events(hook, old, 'failed', 3)
      clock.now += HOUR - 1000
      await upkeep.tick()
      expect(await remaining(hook)).toEqual([...later].sort())
      clock.now += 1000
      await upkeep.tick()
      expect(await remaining(hook)).toEqual([])
    })

    test('a sender stopped while its database closes ends its tick without a word', async () => {
      const clock = { now: Date.now() }
      const database = await kind.open()
      const quiet = new WebhookSender(database.db, { now: () => clock.now })
      const spy = spyOn(console, 'error')
      let logged: string[] = []
      try {
        await database.db.execute(
          sql`insert into webhooks (id, url, events, secret) values ('wh_quiet', 'http://127.0.0.1:9/x', '["webhook.test"]', 'whsec_x')`,
        )
        const ticking = quiet.tick()
        quiet.stop()
        await database.close()
        await ticking
        // Stopped: later ticks do nothing at all.
        await quiet.tick()
      } finally {
        // Read before the restore, which forgets the calls.
        logged = spy.mock.calls.map((call) => String(call[0]))
        spy.mockRestore()
      }
      expect(logged.filter((line) => line.includes('webhook'))).toEqual([])
    })
  })
}
