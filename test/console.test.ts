import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFile } from 'node:fs/promises'
import type { Browser, Page } from 'playwright-core'
import { blockOutside, launchChromium } from './support/browser'
import { testDatabases } from './support/databases'
import { ADMIN_TOKEN } from './support/gateway'
import { gatewaySuite } from './support/gateway-suite'

/**
 * The operator console as an operator without internet uses it: headless Chromium (Debian's,
 * installed by .ci/run) against the gateway on a real database, with the mock upstream behind
 * it and every request outside the gateway's origin aborted. What the console shows is
 * compared with what the admin API answers, as text.
 */
const LAPTOP = { width: 1280, height: 800 }
const PHONE = { width: 390, height: 844 }

const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` }

describe('/console', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true })
  let browser: Browser
  const outside: string[] = []
  const pageErrors: string[] = []

  beforeAll(async () => {
    browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })

  async function openPage(viewport: { width: number; height: number }): Promise<Page> {
    const context = await browser.newContext({ viewport, acceptDownloads: true })
    const page = await context.newPage()
    await blockOutside(page, served.origin, outside)
    page.on('pageerror', (error) => pageErrors.push(error.message))
    return page
  }

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${served.origin}/console`)
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN)
    // Forms submit with Enter.
    await page.getByLabel('Admin token').press('Enter')
    await page.getByRole('navigation', { name: 'Console' }).waitFor()
  }

  /** The API's answer as text, and one field's JSON number as written (`"cost":0.000005`). */
  async function apiText(path: string): Promise<string> {
    const reply = await fetch(`${served.origin}${path}`, { headers: adminHeaders })
    expect({ path, status: reply.status }).toEqual({ path, status: 200 })
    return reply.text()
  }
  const numberIn = (text: string, field: string) => new RegExp(`"${field}":(-?[0-9.]+)`).exec(text)?.[1]

  test('without TOLLGATE_ADMIN_TOKEN there is no console: 404, like the admin API', async () => {
    const harness = served.instance({ env: { TOLLGATE_ADMIN_TOKEN: undefined } })
    for (const path of ['/console', '/console/assets/0/console.js']) {
      expect({ path, status: (await harness.call('GET', path)).status }).toEqual({ path, status: 404 })
    }
    harness.services.close()
  })

  test('the page loads only its own assets; what it shows comes from the admin API, with the token', async () => {
    const reply = await fetch(`${served.origin}/console`)
    expect(reply.status).toBe(200)
    expect(reply.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await reply.text()
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '')
    expect(assets.length).toBe(2)
    for (const asset of assets) {
      expect(asset).toMatch(/^\/console\/assets\/[0-9a-f]{16}\/console\.(js|css)$/)
      const body = await fetch(`${served.origin}${asset}`)
      expect(body.status).toBe(200)
      expect(body.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      // Nothing in the bundle names an outside address to load.
      expect(await body.text()).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/)
    }
    expect((await fetch(`${served.origin}/console/assets/0000000000000000/console.js`)).status).toBe(404)
    expect((await fetch(`${served.origin}/admin/v1/models`)).status).toBe(401)
    const models = (await (await fetch(`${served.origin}/admin/v1/models`, { headers: adminHeaders })).json()) as { data: { id: string }[] }
    expect(models.data.map((model) => model.id)).toContain('test/cheap')
  })

  test('an operator signs in, funds an account, issues a key, and finds its billed call everywhere', async () => {
    const page = await openPage(LAPTOP)
    // A wrong token is refused and not kept.
    await page.goto(`${served.origin}/console`)
    await page.getByLabel('Admin token').fill('wrong-token')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('That is not the admin token.').waitFor()
    await signIn(page)

    // An account, topped up with an idempotency key.
    await page.getByRole('link', { name: 'Accounts' }).click()
    await page.getByLabel('Name').fill('Acme Robotics')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(/#\/accounts\?id=/)
    const accountId = decodeURIComponent(new URL(page.url()).hash.split('id=')[1] ?? '')
    expect(accountId).not.toBe('')
    await page.getByLabel('Amount (credits)').first().fill('25.5')
    await page.getByLabel('Amount (credits)').first().press('Enter')
    await page.getByText('Topped up by 25.5 credits.').waitFor()
    expect(await page.getByTestId('wallet-balance').textContent()).toBe('25.500000')
    expect(numberIn(await apiText(`/admin/v1/accounts/${accountId}`), 'balance')).toBe('25.500000')

    // A key: its secret is shown once.
    await page.getByRole('link', { name: 'Keys' }).first().click()
    await page.getByLabel('Name').fill('ci runner')
    await page.getByRole('button', { name: 'Create key' }).click()
    const secret = (await page.getByTestId('key-secret').textContent()) ?? ''
    expect(secret).toMatch(/^tollgate_sk_prod_/)
    await page.getByRole('region', { name: 'Keys, newest first' }).getByText('ci runner', { exact: true }).waitFor()
    await page.screenshot({ path: '/tmp/console-key-created-laptop.png' })

    // A billed call with that key, through the gateway to the mock upstream.
    served.upstream.script({ text: 'hello', usage: { prompt_tokens: 3, completion_tokens: 1 } })
    const call = await fetch(`${served.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(call.status).toBe(200)
    const requestId = call.headers.get('x-request-id') ?? ''
    expect(requestId).not.toBe('')

    // The overview: today's spend is the API's, to the micro-credit.
    await page.getByRole('link', { name: 'Overview' }).click()
    await page.getByTestId('spend-today-cost').waitFor()
    const today = new Date().toISOString().slice(0, 10)
    const todayText = await apiText(`/admin/v1/usage?group_by=day&since=${today}T00:00:00Z`)
    const cost = numberIn(todayText, 'cost') ?? ''
    expect(cost).toBe('0.000005')
    expect(await page.getByTestId('spend-today-cost').textContent()).toBe(`${cost} credits`)
    expect(await page.getByTestId('spend-today-requests').textContent()).toBe('1')
    // The daily chart: 30 days, today's column the API's amount, stacked by model.
    const daily = page.getByTestId('usage-breakdown')
    expect(await daily.locator('g.period').count()).toBe(30)
    expect(await daily.locator(`g.period[data-period="${today}"]`).getAttribute('data-total')).toBe(cost)
    await daily.locator(`g.period[data-period="${today}"] rect[data-series="test/cheap"]`).waitFor()

    // Usage: the chart's bar and the table's row carry the same amount.
    await page.getByRole('link', { name: 'Usage' }).click()
    await page.getByRole('button', { name: 'Show usage' }).waitFor()
    expect(await page.locator(`rect.bar[data-label="${today}"]`).getAttribute('data-value')).toBe(cost)
    await page.getByRole('region', { name: 'Usage, newest first' }).getByRole('cell', { name: cost, exact: true }).first().waitFor()
    const usageCsv = await downloaded(page, 'Download CSV')
    expect(usageCsv).toBe(await apiText('/admin/v1/usage?group_by=day&format=csv'))

    // The ledger by request id: the charge, and its CSV equal to the API's.
    await page.getByRole('link', { name: 'Ledger' }).click()
    await page.getByLabel('Request id').fill(requestId)
    await page.getByLabel('Request id').press('Enter')
    await page.waitForURL(new RegExp(`request_id=${requestId}`))
    const ledgerText = await apiText(`/admin/v1/ledger?request_id=${requestId}&kind=charge`)
    const charged = numberIn(ledgerText, 'amount') ?? ''
    expect(charged).toBe(cost)
    const entries = page.getByRole('region', { name: 'Entries, newest first' })
    await entries.getByRole('cell', { name: 'charge', exact: true }).waitFor()
    await entries.getByRole('cell', { name: charged, exact: true }).first().waitFor()
    const ledgerCsv = await downloaded(page, 'Download CSV')
    expect(ledgerCsv).toBe(await apiText(`/admin/v1/ledger?request_id=${requestId}&format=csv`))
    expect(ledgerCsv).toContain(requestId)

    // A user's allotment is listed with the accounts.
    const credited = await fetch(`${served.origin}/admin/v1/users/credits`, {
      method: 'POST',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ iss: 'https://id.example.com', sub: 'alice', amount: 3.25 }),
    })
    expect(credited.status).toBe(200)
    await page.getByRole('link', { name: 'Accounts' }).click()
    const users = page.getByRole('region', { name: 'Users, newest first' })
    await users.getByRole('cell', { name: 'alice', exact: true }).waitFor()
    await users.getByRole('cell', { name: '3.250000', exact: true }).first().waitFor()

    // Limits edited on the keys page land in the key's record.
    await page.getByRole('link', { name: 'Keys' }).click()
    const keyId = (await apiText(`/admin/v1/keys?account_id=${accountId}`)).match(/"id":"([^"]+)"/)?.[1] ?? ''
    await page.getByRole('button', { name: `Edit ${keyId}` }).click()
    await page.getByLabel('Requests per minute').last().fill('60')
    await page.getByLabel('Requests per minute').last().press('Enter')
    await eventually(async () => numberIn(await apiText(`/admin/v1/keys/${keyId}`), 'rpm') === '60')
    page.once('dialog', (dialog) => void dialog.accept())
    await page.getByRole('button', { name: `Revoke ${keyId}` }).click()
    await eventually(async () => /"revoked_at":"/.test(await apiText(`/admin/v1/keys/${keyId}`)))

    // Health: the gauges are /metrics' own, and the upstream call is counted.
    await page.getByRole('link', { name: 'Health' }).click()
    await page.getByTestId('holds-open').waitFor()
    const metrics = await apiText('/metrics')
    expect(await page.getByTestId('holds-open').textContent()).toBe(/^tollgate_holds_open (\d+)$/m.exec(metrics)?.[1] ?? null)
    expect(await page.getByTestId('streams-open').textContent()).toBe(/^tollgate_streams_open (\d+)$/m.exec(metrics)?.[1] ?? null)
    // The row of the call's provider (`a`): other test files in this process may have counted calls to other providers.
    const upstreamCalls = page.getByRole('region', { name: 'Every upstream call, by provider and outcome' })
    await upstreamCalls
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'a', exact: true }) })
      .getByRole('cell', { name: 'ok', exact: true })
      .waitFor()

    // Keyboard: on a fresh page the first Tab reaches the skip link, the next ones the navigation.
    await page.reload()
    await page.getByTestId('holds-open').waitFor()
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Overview')

    // Every page at both widths, for a person to look at.
    for (const [width, viewport] of [
      ['laptop', LAPTOP],
      ['phone', PHONE],
    ] as const) {
      const shot = width === 'laptop' ? page : await openPage(viewport)
      if (width === 'phone') {
        await shot.goto(`${served.origin}/console`)
        await shot.screenshot({ path: `/tmp/console-sign-in-${width}.png`, fullPage: true })
        await signIn(shot)
      }
      for (const [name, hash] of [
        ['overview', '#/overview'],
        ['accounts', `#/accounts?id=${accountId}`],
        ['keys', `#/keys?account_id=${accountId}`],
        ['usage', '#/usage'],
        ['ledger', `#/ledger?request_id=${requestId}`],
        ['models', '#/models'],
        ['health', '#/health'],
      ] as const) {
        await shot.goto(`${served.origin}/console${hash}`)
        await shot.locator('main h1').first().waitFor()
        await shot.locator('.loading').waitFor({ state: 'detached' })
        await shot.screenshot({ path: `/tmp/console-${name}-${width}.png`, fullPage: true })
      }
    }
    expect(outside).toEqual([])
    expect(pageErrors).toEqual([])
  }, 120_000)

  /** Clicks the button and returns the text of the file the browser saved. */
  async function downloaded(page: Page, button: string): Promise<string> {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()])
    return readFile((await download.path()) ?? '', 'utf8')
  }
  /** Waits (at most 10 s) until the check holds; the page acts on its own time. */
  async function eventually(check: () => Promise<boolean>): Promise<void> {
    for (let tries = 0; tries < 100; tries++) {
      if (await check()) return
      await Bun.sleep(100)
    }
    throw new Error('The condition never held.')
  }
})
