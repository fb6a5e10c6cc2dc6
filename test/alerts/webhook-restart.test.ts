import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases } from '../support/databases'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { type GatewayProcess, startGatewayProcess } from '../support/process'
import { until, WebhookReceiver } from './webhook-receiver'

/** A gateway killed after storing an event and before sending it: the restarted one sends it. */
describe('webhook events survive a crash', () => {
  const receiver = new WebhookReceiver()
  beforeAll(() => receiver.start())
  afterAll(() => receiver.stop())

  const admin = async (gateway: GatewayProcess, method: string, path: string, payload?: unknown) => {
    const response = await fetch(`${gateway.url}admin/v1${path}`, {
      method,
      headers: { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    })
    return (await response.json()) as any
  }

  async function crashAndRestart(database: Record<string, string>) {
    receiver.receipts.length = 0
    // The first process would look for due deliveries only after a minute: it is killed long before.
    const first = await startGatewayProcess({ ...database, TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, TOLLGATE_WEBHOOK_POLL_MS: '60000' })
    const hook = await admin(first, 'POST', '/webhooks', { url: receiver.url })
    receiver.secret = hook.secret
    const event = await admin(first, 'POST', `/webhooks/${hook.id}/test`)
    expect((await admin(first, 'GET', `/webhooks/${hook.id}/deliveries`)).data).toMatchObject([{ id: event.id, status: 'pending', attempts: 0 }])
    await first.stop('SIGKILL')
    expect(receiver.receipts).toHaveLength(0)
    const second = await startGatewayProcess({ ...database, TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, TOLLGATE_WEBHOOK_POLL_MS: '100' })
    try {
      await until(() => receiver.receipts.length > 0, 15_000, 'the event after the restart')
      expect(receiver.receipts.map((receipt) => [receipt.id, receipt.type, receipt.verified])).toEqual([[event.id, 'webhook.test', true]])
      await until(async () => (await admin(second, 'GET', `/webhooks/${hook.id}/deliveries`)).data[0]?.status === 'delivered', 10_000, 'the log')
    } finally {
      await second.stop()
    }
  }

  test('embedded database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-webhooks-'))
    try {
      await crashAndRestart({ TOLLGATE_DATA_DIR: dataDir })
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)

  const postgres = testDatabases.find((candidate) => candidate.kind === 'postgres')
  test.skipIf(!postgres)(
    'shared Postgres',
    async () => {
      const database = await postgres!.open()
      try {
        await crashAndRestart({ DATABASE_URL: database.url! })
      } finally {
        await database.close()
      }
    },
    60_000,
  )
})
