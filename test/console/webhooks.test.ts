import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { until, WebhookReceiver } from '../alerts/webhook-receiver'
import { ConsolePages, expectNoOverflow } from '../support/console-pages'
import { testDatabases } from '../support/databases'
import { ADMIN_TOKEN } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * The console's Webhooks page in headless Chromium against a served gateway whose webhook sender
 * runs, with a real receiver on loopback: what the page shows is checked against the admin API
 * and against what the receiver got.
 */
const WIDE = { width: 1400, height: 900 }
const WIDER = { width: 1920, height: 1080 }

describe('/console webhooks', () => {
  // Postgres when the run has it (the other console tests use the embedded database), else the embedded one.
  const served = gatewaySuite(testDatabases[testDatabases.length - 1]!, { served: true, mockUpstream: false, env: { TOLLGATE_WEBHOOK_POLL_MS: '50' } })
  const receiver = new WebhookReceiver()
  const pages = new ConsolePages(() => served.origin, ADMIN_TOKEN)
  const { outside, pageErrors } = pages

  beforeAll(async () => {
    receiver.start()
    served.harness.services.webhooks.start()
    await pages.launch()
  }, 60_000)
  afterAll(async () => {
    // The sender stops before the suite closes the database.
    served.harness.services.webhooks.stop()
    await pages.close()
    receiver.stop()
  })

  test('an operator adds a webhook, keeps its secret, sends a test event and sees it delivered', async () => {
    const page = await pages.open(WIDE)
    await page.getByRole('link', { name: 'Webhooks' }).click()
    await page.getByRole('button', { name: 'Add webhook' }).waitFor()

    // Events are checkboxes, all ticked to begin with; one is left out.
    const events = page.getByRole('group', { name: 'Events' })
    for (const type of ['balance.low', 'quota.threshold', 'webhook.test']) expect(await events.getByLabel(type).isChecked()).toBe(true)
    await page.getByLabel('URL').fill(receiver.url)
    await page.getByLabel('Description').fill('Billing on-call')
    await events.getByLabel('quota.threshold').uncheck()
    await page.getByRole('button', { name: 'Add webhook' }).click()

    // The secret, once, with its warning; the form is empty again.
    const secret = (await page.getByTestId('webhook-secret').textContent()) ?? ''
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    receiver.secret = secret
    await page.getByText('copy its signing secret now').waitFor()
    expect(await page.getByLabel('URL').inputValue()).toBe('')
    expect(await page.getByLabel('Description').inputValue()).toBe('')
    expect(await events.getByLabel('quota.threshold').isChecked()).toBe(true)
    const listed = page.getByRole('region', { name: 'Webhooks, newest first' })
    await listed.getByText('Billing on-call').waitFor()
    const [hook] = (await pages.api('GET', '/webhooks')).data
    expect(hook).toMatchObject({ url: receiver.url, events: ['balance.low', 'webhook.test'], description: 'Billing on-call' })
    expect(await listed.textContent()).toContain(receiver.url)
    expect(await listed.textContent()).not.toContain('quota.threshold')
    // The list names the webhook, not its id.
    expect(await listed.textContent()).not.toContain(hook.id)
    await page.screenshot({ path: '/tmp/console-webhook-created-1400.png', fullPage: true })

    // Gone once the page is drawn again: the gateway never shows it twice.
    await pages.visit(page, '#/webhooks')
    expect(await page.getByTestId('webhook-secret').count()).toBe(0)
    expect(await page.content()).not.toContain(secret.slice(6, 26))

    // A test event: the log shows it pending, then delivered, without reloading.
    const before = receiver.receipts.length
    await page.getByRole('button', { name: 'Send a test event to Billing on-call' }).click()
    const log = page.getByRole('region', { name: 'Deliveries, newest first' })
    await log.getByTestId('delivery-status').first().waitFor()
    await log.getByText('delivered', { exact: true }).waitFor({ timeout: 15_000 })
    expect(page.url()).toContain(`#/webhooks?id=${hook.id}`)
    const received = receiver.receipts.slice(before)
    expect(received.map((receipt) => [receipt.type, receipt.verified, receipt.data])).toEqual([['webhook.test', true, { webhook_id: hook.id }]])
    const [delivery] = (await pages.api('GET', `/webhooks/${hook.id}/deliveries`)).data
    expect(delivery).toMatchObject({ id: received[0]?.id, status: 'delivered', attempts: 1, last_status_code: 200, last_error: null })
    const row = log.getByRole('row').filter({ has: page.getByText('delivered', { exact: true }) })
    expect((await row.getByRole('cell').allTextContents()).slice(1, 6)).toEqual(['webhook.test', 'delivered', '1', '200', '—'])

    // A receiver that refuses: the refusal and its reason, in the failing colour's class.
    const refused = new WebhookReceiver().start()
    refused.answer = () => 500
    try {
      const broken = await pages.api('POST', '/webhooks', { url: refused.url, description: `Refuses everything ${'and says so at length '.repeat(6)}` })
      await pages.api('POST', `/webhooks/${broken.id}/test`)
      await until(async () => (await pages.api('GET', `/webhooks/${broken.id}/deliveries`)).data[0]?.last_status_code === 500, 10_000, 'a refused attempt')
      await pages.visit(page, `#/webhooks?id=${broken.id}`)
      const refusedLog = page.getByRole('region', { name: 'Deliveries, newest first' })
      await refusedLog.getByText('HTTP 500: receiver says no').waitFor()
      expect(await refusedLog.locator('.status-pending').textContent()).toBe('pending')

      // Both widths: nothing overflows its card, and a person looks at them.
      for (const [width, viewport] of [
        ['1400', WIDE],
        ['1920', WIDER],
      ] as const) {
        await page.setViewportSize(viewport)
        await pages.visit(page, `#/webhooks?id=${hook.id}`)
        await log.getByText('delivered', { exact: true }).waitFor()
        await expectNoOverflow(page, `delivered log at ${width}`)
        await page.screenshot({ path: `/tmp/console-webhooks-${width}.png`, fullPage: true })
        await pages.visit(page, `#/webhooks?id=${broken.id}`)
        await refusedLog.getByText('HTTP 500: receiver says no').waitFor()
        await expectNoOverflow(page, `refused log at ${width}`)
        await page.screenshot({ path: `/tmp/console-webhooks-refused-${width}.png`, fullPage: true })
      }
      await pages.api('DELETE', `/webhooks/${broken.id}`)
    } finally {
      refused.stop()
    }
    expect(outside).toEqual([])
    expect(pageErrors).toEqual([])
  }, 90_000)

  test('the log pages newest first; deleting asks first and removes the webhook', async () => {
    const hook = await pages.api('POST', '/webhooks', { url: 'http://127.0.0.1:9/none', events: ['webhook.test'], description: 'Paged' })
    const ids: string[] = []
    for (let index = 0; index < 55; index++) ids.push((await pages.api('POST', `/webhooks/${hook.id}/test`)).id)
    const page = await pages.open(WIDE)
    await pages.visit(page, `#/webhooks?id=${hook.id}`)
    const panel = page.getByRole('region', { name: 'Deliveries to Paged' })
    await panel.getByRole('region', { name: 'Deliveries, newest first' }).waitFor()
    await panel.getByRole('button', { name: 'Older deliveries' }).click()
    await panel.getByRole('region', { name: 'Older deliveries' }).waitFor()
    expect(await panel.getByTestId('delivery-status').count()).toBe(55)
    expect(await panel.getByRole('button', { name: 'Older deliveries' }).count()).toBe(0)

    // Dismissed: nothing happens. Accepted: gone from the page and the API.
    page.once('dialog', (dialog) => void dialog.dismiss())
    await page.getByRole('button', { name: 'Delete Paged' }).click()
    expect((await pages.api('GET', '/webhooks')).data.map((row: { id: string }) => row.id)).toContain(hook.id)
    let question = ''
    page.once('dialog', (dialog) => {
      question = dialog.message()
      void dialog.accept()
    })
    await page.getByRole('button', { name: 'Delete Paged' }).click()
    await until(async () => !(await pages.api('GET', '/webhooks')).data.some((row: { id: string }) => row.id === hook.id), 10_000, 'the deletion')
    expect(question).toContain('http://127.0.0.1:9/none')
    await page.waitForURL(/#\/webhooks$/)
    await page.getByRole('region', { name: 'Webhooks, newest first' }).waitFor()
    expect(await page.getByText('Paged', { exact: true }).count()).toBe(0)
    expect(pageErrors).toEqual([])
  }, 60_000)

  test("low-balance thresholds are shown with the account's wallet and the key's allotment", async () => {
    const account = await pages.api('POST', '/accounts', { name: 'Threshold Ltd' })
    await pages.api('PATCH', `/accounts/${account.id}`, { low_balance_threshold: 5.25 })
    const unset = await pages.api('POST', '/accounts', { name: 'No Alerts Inc' })
    const key = await pages.api('POST', '/keys', { account_id: account.id, env: 'prod', name: 'alerting key', low_balance_threshold: 2 })
    const page = await pages.open(WIDE)
    await pages.visit(page, `#/accounts?id=${account.id}`)
    expect(await page.getByTestId('wallet-low-balance-threshold').textContent()).toBe('5.250000')
    await pages.visit(page, `#/accounts?id=${unset.id}`)
    expect(await page.getByTestId('wallet-low-balance-threshold').textContent()).toBe('none')
    await pages.visit(page, `#/keys?account_id=${account.id}`)
    const row = page.getByRole('row').filter({ has: page.getByText('alerting key') })
    expect(await row.getByTestId('key-low-balance-threshold').textContent()).toBe('alert below 2.000000')
    expect(key.low_balance_threshold).toBe(2)
    expect(pageErrors).toEqual([])
  }, 60_000)
})
