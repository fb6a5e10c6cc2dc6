import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { WebhookSender } from '../../src/alerts/webhook-sender'
import { openDatabase } from '../../src/db/client'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { gatewaySuite } from '../support/gateway-suite'
import { until, WebhookReceiver } from './webhook-receiver'

for (const kind of testDatabases) {
  describe(`webhooks on ${kind.kind}`, () => {
    const receiver = new WebhookReceiver()
    const senders: WebhookSender[] = []
    // Registered before the suite's own tear-down, so it runs first: no sender outlives the database.
    afterAll(() => {
      for (const sender of senders) sender.stop()
      receiver.stop()
    })
    const suite = gatewaySuite(kind, { mockUpstream: false })
    beforeAll(() => receiver.start())

    /** A sender on the suite's database with a quick poll and short retries, started. */
    function sender(options: { retryDelaysMs?: number[]; db?: typeof suite.database.db } = {}) {
      const started = new WebhookSender(options.db ?? suite.database.db, { now: Date.now, pollMs: 15, retryDelaysMs: options.retryDelaysMs ?? [30, 30, 30] })
      started.start()
      senders.push(started)
      return started
    }

    async function webhook(body: Record<string, unknown> = {}) {
      const created = await suite.harness.admin('POST', '/webhooks', { url: receiver.url, ...body })
      expect(created.status).toBe(201)
      receiver.secret = created.json.secret
      return created.json as { id: string; secret: string }
    }

    async function deliveries(id: string) {
      const page = await suite.harness.admin('GET', `/webhooks/${id}/deliveries`)
      expect(page.status).toBe(200)
      return page.json.data as any[]
    }

    async function stopAll() {
      for (const started of senders.splice(0)) started.stop()
    }

    test('creating answers the secret once; the list never shows it, nor do the logs', async () => {
      const created = await suite.harness.admin('POST', '/webhooks', { url: 'https://alerts.example.com/in', description: 'ops' })
      expect(created.status).toBe(201)
      expect(created.json).toMatchObject({
        url: 'https://alerts.example.com/in',
        events: ['balance.low', 'quota.threshold', 'webhook.test'],
        description: 'ops',
      })
      expect(created.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(Buffer.from(created.json.secret.slice(6), 'base64')).toHaveLength(32)
      const listed = await suite.harness.admin('GET', '/webhooks')
      expect(listed.status).toBe(200)
      const row = listed.json.data.find((candidate: { id: string }) => candidate.id === created.json.id)
      expect(row).toEqual({
        id: created.json.id,
        url: 'https://alerts.example.com/in',
        events: created.json.events,
        description: 'ops',
        created_at: created.json.created_at,
      })
      expect(listed.text).not.toContain(created.json.secret.slice(6, 20))
      expect(suite.harness.logs.join('\n')).not.toContain(created.json.secret.slice(6, 20))
      expect((await suite.harness.admin('DELETE', `/webhooks/${created.json.id}`)).status).toBe(200)
      expect((await suite.harness.admin('DELETE', `/webhooks/${created.json.id}`)).status).toBe(404)
    })

    test('bad input is a 400 naming the parameter', async () => {
      for (const url of ['ftp://example.com/x', 'not a url', 'javascript:alert(1)', `https://example.com/${'a'.repeat(2100)}`]) {
        const reply = await suite.harness.admin('POST', '/webhooks', { url })
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe('url')
      }
      for (const events of [['balance.low', 'money.gone'], [], ['webhook.test', 'webhook.test']]) {
        const reply = await suite.harness.admin('POST', '/webhooks', { url: receiver.url, events })
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toStartWith('events')
      }
      const long = await suite.harness.admin('POST', '/webhooks', { url: receiver.url, description: 'x'.repeat(501) })
      expect(long.json.error.param).toBe('description')
      expectError(await suite.harness.admin('POST', '/webhooks/wh_none/test'), 404, 'not_found')
      expectError(await suite.harness.admin('GET', '/webhooks/wh_none/deliveries'), 404, 'not_found')
      const page = await suite.harness.admin('GET', '/webhooks/wh_none/deliveries?cursor=nonsense')
      expect(page.status).toBeGreaterThanOrEqual(400)
      expect(page.status).toBeLessThan(500)
    })

    test('a test event arrives signed, and the log shows it delivered', async () => {
      receiver.answer = () => 200
      const hook = await webhook({ events: ['balance.low'] })
      const sent = await suite.harness.admin('POST', `/webhooks/${hook.id}/test`)
      expect(sent.status).toBe(200)
      const [pending] = await deliveries(hook.id)
      expect(pending).toMatchObject({ id: sent.json.id, type: 'webhook.test', status: 'pending', attempts: 0, delivered_at: null })
      const before = receiver.receipts.length
      sender()
      await until(async () => (await deliveries(hook.id))[0]?.status === 'delivered', 10_000, 'the delivery')
      const receipts = receiver.receipts.slice(before)
      expect(receipts).toHaveLength(1)
      expect(receipts[0]).toMatchObject({ id: sent.json.id, verified: true, type: 'webhook.test', data: { webhook_id: hook.id }, status: 200 })
      expect(Math.abs((receipts[0]?.timestamp ?? 0) - Date.now() / 1000)).toBeLessThan(30)
      const [delivered] = await deliveries(hook.id)
      expect(delivered).toMatchObject({ id: sent.json.id, status: 'delivered', attempts: 1, last_status_code: 200, last_error: null })
      expect(Date.parse(delivered.delivered_at)).toBeGreaterThanOrEqual(Date.parse(delivered.created_at))
      await stopAll()
    })

    test('a receiver down for three attempts (500, 500, refused) still gets the event, under one webhook-id', async () => {
      const hook = await webhook()
      receiver.answer = (attempt) => (attempt <= 2 ? 500 : 200)
      receiver.receipts.length = 0
      const sent = await suite.harness.admin('POST', `/webhooks/${hook.id}/test`)
      sender({ retryDelaysMs: [30, 30, 200, 30, 30] })
      await until(() => receiver.receipts.length >= 2, 10_000, 'two refusals')
      receiver.stop()
      await until(
        async () => (await deliveries(hook.id))[0]?.attempts === 3 && (await deliveries(hook.id))[0]?.last_status_code === null,
        10_000,
        'a refused attempt',
      )
      const refused = (await deliveries(hook.id))[0]
      expect(refused).toMatchObject({ status: 'pending', attempts: 3, last_status_code: null })
      expect(refused.last_error).toStartWith('could not be sent')
      receiver.start()
      await until(async () => (await deliveries(hook.id))[0]?.status === 'delivered', 10_000, 'the delivery')
      expect(receiver.receipts.map((receipt) => [receipt.id, receipt.status, receipt.verified])).toEqual([
        [sent.json.id, 500, true],
        [sent.json.id, 500, true],
        [sent.json.id, 200, true],
      ])
      expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'delivered', attempts: 4, last_status_code: 200, last_error: null })
      await stopAll()
    }, 20_000)

    test('after the retries run out the delivery is failed, and is not sent again', async () => {
      const hook = await webhook()
      receiver.answer = () => 503
      receiver.receipts.length = 0
      await suite.harness.admin('POST', `/webhooks/${hook.id}/test`)
      sender({ retryDelaysMs: [20, 20] })
      await until(async () => (await deliveries(hook.id))[0]?.status === 'failed', 10_000, 'the failure')
      const [failed] = await deliveries(hook.id)
      expect(failed).toMatchObject({ status: 'failed', attempts: 3, last_status_code: 503, delivered_at: null })
      expect(failed.last_error).toBe('HTTP 503: receiver says no')
      await Bun.sleep(150)
      expect(receiver.receipts).toHaveLength(3)
      await stopAll()
      receiver.answer = () => 200
    }, 15_000)

    test('deleting a webhook drops what it had not been sent', async () => {
      const hook = await webhook()
      await suite.harness.admin('POST', `/webhooks/${hook.id}/test`)
      expect(await deliveries(hook.id)).toHaveLength(1)
      expect((await suite.harness.admin('DELETE', `/webhooks/${hook.id}`)).status).toBe(200)
      expectError(await suite.harness.admin('GET', `/webhooks/${hook.id}/deliveries`), 404, 'not_found')
    })

    test('the delivery log pages newest first', async () => {
      const hook = await webhook()
      const ids: string[] = []
      for (let index = 0; index < 5; index++) ids.push((await suite.harness.admin('POST', `/webhooks/${hook.id}/test`)).json.id)
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const page = await suite.harness.admin('GET', `/webhooks/${hook.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        seen.push(...page.json.data.map((row: { id: string }) => row.id))
        cursor = page.json.next_cursor
      } while (cursor)
      expect(seen).toEqual(ids.reverse())
      await suite.harness.admin('DELETE', `/webhooks/${hook.id}`)
    })

    test('two instances never both deliver one event', async () => {
      // Every webhook left from the tests above is gone: only this one receives.
      for (const row of (await suite.harness.admin('GET', '/webhooks')).json.data) await suite.harness.admin('DELETE', `/webhooks/${row.id}`)
      const hook = await webhook()
      receiver.answer = () => 200
      receiver.delayMs = 5
      receiver.receipts.length = 0
      const second = kind.kind === 'postgres' ? await openDatabase({ url: suite.database.url }) : undefined
      try {
        const events = 40
        for (let index = 0; index < events; index++) await suite.harness.admin('POST', `/webhooks/${hook.id}/test`)
        sender()
        sender({ db: second?.db })
        await until(async () => (await deliveries(hook.id)).every((row) => row.status === 'delivered'), 20_000, 'every delivery')
        await stopAll()
        const ids = receiver.receipts.map((receipt) => receipt.id)
        expect(ids).toHaveLength(events)
        expect(new Set(ids).size).toBe(events)
        expect(receiver.receipts.every((receipt) => receipt.verified)).toBe(true)
      } finally {
        receiver.delayMs = 0
        await second?.close()
      }
    }, 30_000)
  })
}
