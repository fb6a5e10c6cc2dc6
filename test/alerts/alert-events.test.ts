import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { crossedPercents } from '../../src/alerts/quota-thresholds'
import { WebhookSender } from '../../src/alerts/webhook-sender'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { IdentityProvider } from '../support/identity-provider'
import { until, WebhookReceiver } from './webhook-receiver'

test('a quota threshold is crossed when the spend passes it, not when it stays on one side', () => {
  expect(crossedPercents({ quota: 100n, spentBefore: 0n, spentAfter: 49n })).toEqual([])
  expect(crossedPercents({ quota: 100n, spentBefore: 49n, spentAfter: 50n })).toEqual([50])
  expect(crossedPercents({ quota: 100n, spentBefore: 50n, spentAfter: 79n })).toEqual([])
  expect(crossedPercents({ quota: 100n, spentBefore: 10n, spentAfter: 100n })).toEqual([50, 80, 100])
  expect(crossedPercents({ quota: 100n, spentBefore: 100n, spentAfter: 500n })).toEqual([])
  expect(crossedPercents({ quota: 0n, spentBefore: 0n, spentAfter: 5n })).toEqual([])
})

for (const kind of testDatabases) {
  describe(`alert events on ${kind.kind}`, () => {
    let idp: IdentityProvider
    beforeAll(async () => {
      idp = await new IdentityProvider().start()
    })
    afterAll(() => idp.stop())
    const receiver = new WebhookReceiver()
    let sender: WebhookSender
    // Registered before the suite's own tear-down, so it runs first: the sender stops before the database closes.
    afterAll(() => {
      sender?.stop()
      receiver.stop()
    })
    const suite = gatewaySuite(kind, {
      env: () => ({ TOLLGATE_OIDC_ISSUER: idp.issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience, TOLLGATE_OIDC_JWKS_URL: `${idp.issuer}/jwks` }),
    })
    beforeAll(async () => {
      receiver.start()
      const created = await suite.harness.admin('POST', '/webhooks', { url: receiver.url, events: ['balance.low', 'quota.threshold'] })
      receiver.secret = created.json.secret
      sender = new WebhookSender(suite.database.db, { now: Date.now, retryDelaysMs: [20] })
    })

    /** One look for alerts, and every delivery it stored sent. */
    async function look() {
      await sender.tick()
      await until(() => sender.sending === 0, 10_000, 'the deliveries in flight')
    }

    const adjust = (accountId: string, amount: number) => suite.harness.admin('POST', `/accounts/${accountId}/credits`, { amount })

    test('balance.low: once per crossing, armed again by a top-up', async () => {
      const account = await suite.harness.account(10)
      const set = await suite.harness.admin('PATCH', `/accounts/${account.id}`, { low_balance_threshold: 5 })
      expect(set.status).toBe(200)
      expect(set.json).toMatchObject({ id: account.id, low_balance_threshold: 5, wallet: { balance: 10 } })
      expect((await suite.harness.admin('GET', `/accounts/${account.id}`)).json.low_balance_threshold).toBe(5)
      const mine = () => receiver.delivered('balance.low').filter((receipt) => receipt.data.account_id === account.id)
      await look()
      expect(mine()).toHaveLength(0)
      await adjust(account.id, -5.5)
      await look()
      await look()
      expect(mine().map((receipt) => receipt.data)).toEqual([
        { payer: { type: 'wallet', id: account.id }, account_id: account.id, balance: 4.5, available: 4.5, threshold: 5 },
      ])
      await adjust(account.id, -1)
      await look()
      expect(mine()).toHaveLength(1)
      // A top-up back to the threshold arms it; the next fall below raises it again.
      await adjust(account.id, 1.5)
      await look()
      expect(mine()).toHaveLength(1)
      await adjust(account.id, -0.000001)
      await look()
      expect(mine()).toHaveLength(2)
      expect(mine()[1]?.data.balance).toBe(4.999999)
      expect(mine()[0]?.id).not.toBe(mine()[1]?.id)
      // Cleared: no alert, whatever the balance.
      await suite.harness.admin('PATCH', `/accounts/${account.id}`, { low_balance_threshold: null })
      await adjust(account.id, 10)
      await adjust(account.id, -14)
      await look()
      expect(mine()).toHaveLength(2)
      expect(receiver.receipts.every((receipt) => receipt.verified)).toBe(true)
    })

    test("balance.low on a key's allotment, raised by a billed call's settlement", async () => {
      const { id, key } = await suite.harness.key({ allotment: 1, low_balance_threshold: 0.999999 })
      const view = await suite.harness.admin('GET', `/keys/${id}`)
      expect(view.json.low_balance_threshold).toBe(0.999999)
      const call = await suite.harness.call('POST', '/v1/chat/completions', {
        headers: bearer(key),
        body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] },
      })
      expect(call.status).toBe(200)
      const cost = call.json.usage.cost as number
      expect(cost).toBeGreaterThan(0)
      await look()
      const mine = receiver.delivered('balance.low').filter((receipt) => receipt.data.payer.id === id)
      expect(mine).toHaveLength(1)
      expect(mine[0]?.data).toMatchObject({ payer: { type: 'key_allotment', id }, threshold: 0.999999 })
      expect(mine[0]?.data.balance).toBeCloseTo(1 - cost, 6)
    })

    test('low_balance_threshold is checked like any amount', async () => {
      const account = await suite.harness.account(1)
      for (const value of [-1, 'five', 1e12]) {
        const reply = await suite.harness.admin('PATCH', `/accounts/${account.id}`, { low_balance_threshold: value })
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe('low_balance_threshold')
      }
      expectError(await suite.harness.admin('PATCH', '/accounts/acct_none', { low_balance_threshold: 1 }), 404, 'not_found')
      const { id } = await suite.harness.key({ account_id: account.id })
      const patched = await suite.harness.admin('PATCH', `/keys/${id}`, { low_balance_threshold: 0.5 })
      expect(patched.json.low_balance_threshold).toBe(0.5)
      expect((await suite.harness.admin('PATCH', `/keys/${id}`, { low_balance_threshold: null })).json.low_balance_threshold).toBeNull()
    })

    test('quota.threshold: 50, 80 and 100 percent of the monthly quota, each once', async () => {
      const { id, key, accountId } = await suite.harness.key({ monthly_quota: 100 })
      const call = await suite.harness.call('POST', '/v1/chat/completions', {
        headers: bearer(key),
        body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] },
      })
      expect(call.status).toBe(200)
      const spentMicros = Math.round(call.json.usage.cost * 1_000_000)
      const mine = () => receiver.delivered('quota.threshold').filter((receipt) => receipt.data.key_id === id)
      await look()
      expect(mine()).toHaveLength(0)
      // The spend stays; the quota shrinks under it: 50 %, then 80 %, then 100 %, then past it.
      const quotas = [Math.floor((spentMicros * 100) / 60), Math.floor((spentMicros * 100) / 85), spentMicros, Math.floor(spentMicros / 2)]
      for (const quota of quotas) {
        expect((await suite.harness.admin('PATCH', `/keys/${id}`, { monthly_quota: quota / 1_000_000 })).status).toBe(200)
        await look()
        await look()
      }
      const now = new Date()
      const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString()
      expect(mine().map((receipt) => receipt.data)).toEqual(
        [50, 80, 100].map((percent, index) => ({
          scope: 'key',
          key_id: id,
          account_id: accountId,
          period: 'month',
          period_start: periodStart,
          quota: (quotas[index] ?? 0) / 1_000_000,
          spent: spentMicros / 1_000_000,
          percent,
        })),
      )
      expect(new Set(mine().map((receipt) => receipt.id)).size).toBe(3)
    })

    test("quota.threshold of a key's daily quota, and of a user's default quota", async () => {
      const now = new Date()
      const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString()
      const chat = { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }

      const { id, key, accountId } = await suite.harness.key({ quotas: { day: 100 } })
      const call = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: chat })
      expect(call.status).toBe(200)
      const keySpent = Math.round(call.json.usage.cost * 1_000_000)
      expect((await suite.harness.admin('PATCH', `/keys/${id}`, { quotas: { day: keySpent / 1_000_000 } })).status).toBe(200)
      await look()
      await look()
      const forKey = receiver.delivered('quota.threshold').filter((receipt) => receipt.data.key_id === id)
      // From none to all of it at once: every threshold passed is told, each once.
      expect(forKey.map((receipt) => receipt.data)).toEqual(
        [50, 80, 100].map((percent) => ({
          scope: 'key',
          key_id: id,
          account_id: accountId,
          period: 'day',
          period_start: dayStart,
          quota: keySpent / 1_000_000,
          spent: keySpent / 1_000_000,
          percent,
        })),
      )

      // No limits of the user's own: the default counts (a month's limit here; the other periods have none).
      const sub = `alert-user-${kind.kind}`
      expect((await suite.harness.admin('POST', '/users/credits', { iss: idp.issuer, sub, amount: 10 })).status).toBeLessThan(300)
      const spent = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(await idp.token({ sub })), body: chat })
      expect(spent.status).toBe(200)
      const userSpent = Math.round(spent.json.usage.cost * 1_000_000)
      expect((await suite.harness.admin('PUT', '/users/default-quotas', { quotas: { month: userSpent / 1_000_000 } })).status).toBe(200)
      await look()
      await look()
      const forUser = receiver.delivered('quota.threshold').filter((receipt) => receipt.data.sub === sub)
      expect(forUser.map((receipt) => receipt.data)).toEqual(
        [50, 80, 100].map((percent) => ({
          scope: 'user',
          iss: idp.issuer,
          sub,
          period: 'month',
          period_start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
          quota: userSpent / 1_000_000,
          spent: userSpent / 1_000_000,
          percent,
        })),
      )
      expect((await suite.harness.admin('PUT', '/users/default-quotas', { quotas: {} })).status).toBe(200)
    })
  })
}
