import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFile } from 'node:fs/promises'
import type { Page } from 'playwright-core'
import { ConsolePages } from '../support/console-pages'
import { testDatabases } from '../support/databases'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * The console's Activity and Request pages and the overview's error rate and latency
 * (docs/operations.md#console), in headless Chromium against a served gateway that records its
 * requests: a billed call in a session, a call through an alias, a refused 402 and an unknown
 * model; what the pages show is compared with what the admin API answers.
 */
const WIDE = { width: 1400, height: 900 }
const PHONE = { width: 390, height: 844 }

const adminHeaders = { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' }

interface StatsRow {
  period: string
  requests: number
  refused: number
  failed: number
  p50_ms: number | null
  p95_ms: number | null
}

describe('/console activity', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true })
  const pages = new ConsolePages(() => served.origin, ADMIN_TOKEN)
  const { outside, pageErrors } = pages
  const seen = { account: '', runner: '', broke: '', billed: '', aliased: '', refused: '', unknown: '' }

  async function chat(secret: string, model: string, headers: Record<string, string> = {}): Promise<string> {
    served.upstream.script({ text: 'hello', usage: { prompt_tokens: 40, completion_tokens: 12 } })
    const reply = await fetch(`${served.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(secret), 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }),
    })
    await reply.arrayBuffer()
    return reply.headers.get('x-request-id') ?? ''
  }

  beforeAll(async () => {
    await pages.launch()
    const account = await pages.api('POST', '/accounts', { name: 'Acme Robotics' })
    await pages.api('POST', `/accounts/${account.id}/credits`, { amount: 10 })
    const runner = await pages.api('POST', '/keys', { account_id: account.id, env: 'prod', name: 'ci runner' })
    const poor = await pages.api('POST', '/accounts', { name: 'Empty Pockets' })
    const broke = await pages.api('POST', '/keys', { account_id: poor.id, env: 'prod', name: 'broke key' })
    Object.assign(seen, {
      account: account.id,
      runner: runner.id,
      broke: broke.id,
      billed: await chat(runner.key, 'test/cheap', { 'x-session-id': 'sess-console-7' }),
      aliased: await chat(runner.key, 'tollgate/best'),
      refused: await chat(broke.key, 'test/cheap'),
      unknown: await chat(runner.key, 'test/no-such-model'),
    })
    await served.harness.services.activity.flush()
  }, 60_000)
  afterAll(async () => {
    await pages.close()
  })

  /** Does `action` (a submit) and waits until the page it leads to has drawn itself. */
  async function redrawn(page: Page, action: () => Promise<void>): Promise<void> {
    await page.evaluate(() => document.querySelector('main')?.setAttribute('data-drawn-before', ''))
    await action()
    await page.locator('main:not([data-drawn-before]) h1').waitFor()
    await page.locator('.loading').waitFor({ state: 'detached' })
  }
  /** The request ids the Activity page lists, in its order. */
  const listed = (page: Page) =>
    page
      .getByRole('region', { name: 'Requests, newest first' })
      .getByRole('link', { name: /^Request / })
      .evaluateAll((links) => links.map((link) => link.getAttribute('data-request-id')))

  test('the Activity page lists every request, billed or refused, and filters as the API does', async () => {
    const page = await pages.open(WIDE, { downloads: true })
    await pages.visit(page, `#/activity?key_id=${seen.runner}`)
    const api_ = await pages.api('GET', `/requests?key_id=${seen.runner}`)
    expect(await listed(page)).toEqual(api_.data.map((record: { request_id: string }) => record.request_id))
    expect(await listed(page)).toEqual([seen.unknown, seen.aliased, seen.billed])
    const rows = page.getByRole('region', { name: 'Requests, newest first' }).getByRole('row')
    // The alias asked for, and the model that served it; the unknown model's 404 and its code.
    const alias = rows.filter({ has: page.getByRole('link', { name: `Request ${seen.aliased}` }) })
    expect(await alias.textContent()).toContain('tollgate/best→ test/smart')
    const unknown = rows.filter({ has: page.getByRole('link', { name: `Request ${seen.unknown}` }) })
    expect(await unknown.getByRole('cell').nth(1).textContent()).toBe(`404${api_.data[0].error_code}`)
    expect(api_.data[0].error_code).toBe('model_not_found')
    // The key by its name, not its id.
    expect(await alias.locator(`[title="${seen.runner}"]`).first().textContent()).toBe('ci runner')

    // Filters through the form: refused ones (4xx) of every key, by status class.
    await pages.visit(page, '#/activity')
    await page.getByLabel('Status').fill('4xx')
    await redrawn(page, () => page.getByLabel('Status').press('Enter'))
    expect(page.url()).toEndWith('#/activity?kind=api&status=4xx')
    const refused = (await pages.api('GET', '/requests?kind=api&status=4xx')).data.map((record: { request_id: string }) => record.request_id)
    expect(refused).toContain(seen.refused)
    expect(await listed(page)).toEqual(refused)
    // By error code, by session, and by key chosen by name.
    const refusal = await pages.api('GET', `/requests/${seen.refused}`)
    expect(refusal).toMatchObject({ status: 402, key_id: seen.broke })
    await pages.visit(page, `#/activity?error_code=${refusal.error_code}`)
    expect(await listed(page)).toEqual([seen.refused])
    expect((await pages.api('GET', '/requests?session_id=sess-console-7')).data.map((record: { request_id: string }) => record.request_id)).toEqual([
      seen.billed,
    ])
    await pages.visit(page, '#/activity?session_id=sess-console-7')
    expect(await listed(page)).toEqual([seen.billed])
    await pages.visit(page, '#/activity')
    await page.locator('select[name="key_id"]').selectOption({ label: 'broke key' })
    await redrawn(page, () => page.getByRole('button', { name: 'Find requests' }).click())
    expect(page.url()).toEndWith(`#/activity?kind=api&key_id=${seen.broke}`)
    expect(await listed(page)).toEqual([seen.refused])

    // The console's own calls are admin calls: listed only when asked for.
    await pages.visit(page, '#/activity')
    const routes = page.getByRole('region', { name: 'Requests, newest first' }).locator('tbody tr td:nth-child(3)')
    expect((await routes.allTextContents()).filter((route) => route.includes('/admin/'))).toEqual([])
    await page.locator('select[name="kind"]').selectOption({ label: 'Admin API calls' })
    await redrawn(page, () => page.getByRole('button', { name: 'Find requests' }).click())
    const adminRoutes = await routes.allTextContents()
    expect(adminRoutes.length).toBeGreaterThan(0)
    expect(adminRoutes.filter((route) => !route.includes('/admin/v1/'))).toEqual([])

    // The CSV is the API's export of the same selection, byte for byte.
    await pages.visit(page, `#/activity?key_id=${seen.runner}`)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    const csv = await readFile((await download.path()) ?? '', 'utf8')
    const exported = await (await fetch(`${served.origin}/admin/v1/requests?key_id=${seen.runner}&format=csv`, { headers: adminHeaders })).text()
    expect(csv).toBe(exported)
    expect(csv.split('\n').filter(Boolean)).toHaveLength(4)
    expect(pageErrors).toEqual([])
  }, 60_000)

  test('a request page shows its attempts, its ledger entries and its cost; the ledger and activity lead to it', async () => {
    const page = await pages.open(WIDE, { downloads: true })
    await pages.visit(page, `#/activity?session_id=sess-console-7`)
    await page.getByRole('link', { name: `Request ${seen.billed}` }).click()
    await page.waitForURL(/#\/request\?id=/)
    await page.locator('.loading').waitFor({ state: 'detached' })
    const text = await (await fetch(`${served.origin}/admin/v1/requests/${seen.billed}`, { headers: adminHeaders })).text()
    const record = JSON.parse(text)
    const cost = /"cost":([0-9.]+)/.exec(text)?.[1]
    expect(await page.getByTestId('request-cost').textContent()).toBe(`${cost} credits`)
    const attempts = page.getByRole('region', { name: 'Upstream attempts, in order' })
    expect(await attempts.getByRole('row').count()).toBe(1 + record.attempts.length)
    expect(await attempts.getByRole('cell').nth(1).textContent()).toBe(record.attempts[0].provider)
    const entries = page.getByRole('region', { name: 'Ledger entries of this request' })
    expect((await entries.getByRole('row').allTextContents()).length).toBe(1 + record.ledger.length)
    for (const entry of record.ledger) await entries.getByRole('cell', { name: entry.kind, exact: true }).first().waitFor()
    expect(await page.locator('main').textContent()).toContain('sess-console-7')

    // From the ledger, a request id leads to the same page.
    await pages.visit(page, `#/ledger?request_id=${seen.billed}`)
    await page.getByRole('link', { name: seen.billed }).first().click()
    await page.waitForURL(new RegExp(`#/request\\?id=${seen.billed}`))
    await page.getByTestId('request-cost').waitFor()
    // A request the activity does not know (an id never served) still shows its ledger, empty.
    await pages.visit(page, '#/request?id=req_never_served')
    await page.getByText('has no activity record of this request').waitFor()
    expect(pageErrors).toEqual([])
  }, 60_000)

  test('the overview draws error rate and latency per period from the request stats, every period drawn', async () => {
    const page = await pages.open(WIDE, { downloads: true })
    const [stats] = await Promise.all([
      page.waitForResponse((response) => response.url().includes('/admin/v1/requests/stats') && response.url().includes('group_by=hour')),
      pages.visit(page, '#/overview?range=48h'),
    ])
    expect(new URL(stats.url()).searchParams.get('group_by')).toBe('hour')
    // Calls to the API only: the console's own would crowd them out.
    expect(new URL(stats.url()).searchParams.get('kind')).toBe('api')
    const rows = ((await stats.json()) as { data: StatsRow[] }).data
    const hour = `${new Date().toISOString().slice(0, 13)}:00:00Z`
    const current = rows.find((row) => row.period === hour)
    if (!current) throw new Error(`no stats for ${hour}: ${JSON.stringify(rows)}`)
    expect(current.refused).toBeGreaterThanOrEqual(2)
    const point = (chart: string, series: string) =>
      page.getByTestId(chart).locator(`circle[data-series="${series}"][data-period="${hour}"]`).getAttribute('data-value')
    expect(await point('error-rate', 'refused (4xx)')).toBe(String(Number(((100 * current.refused) / current.requests).toFixed(2))))
    expect(await point('error-rate', 'failed (5xx)')).toBe(String(Number(((100 * current.failed) / current.requests).toFixed(2))))
    expect(await point('latency', 'p50')).toBe(String(current.p50_ms))
    expect(await point('latency', 'p95')).toBe(String(current.p95_ms))
    // 48 hours, each drawn: an hour without requests has a zero error rate and no latency.
    expect(await page.getByTestId('error-rate').locator('circle[data-series="refused (4xx)"]').count()).toBe(48)
    const earlier = `${new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 13)}:00:00Z`
    if (!rows.some((row) => row.period === earlier)) {
      expect(await page.getByTestId('error-rate').locator(`circle[data-period="${earlier}"]`).first().getAttribute('data-value')).toBe('0')
      expect(await page.getByTestId('latency').locator(`circle[data-period="${earlier}"]`).count()).toBe(0)
    }
    expect(pageErrors).toEqual([])
  }, 60_000)

  test('the pages fit a laptop and a phone, and nothing is loaded from outside', async () => {
    for (const [width, viewport] of [
      ['1400', WIDE],
      ['390', PHONE],
    ] as const) {
      const page = await pages.open(viewport, { downloads: true })
      for (const [name, hash] of [
        ['activity', '#/activity'],
        ['request', `#/request?id=${seen.aliased}`],
        ['overview-health', '#/overview?range=48h'],
      ] as const) {
        await pages.visit(page, hash)
        const overflowing = await page.evaluate(() => {
          const found: string[] = []
          if (document.documentElement.scrollWidth > window.innerWidth) found.push(`the page (${document.documentElement.scrollWidth}px)`)
          for (const card of document.querySelectorAll<HTMLElement>('.card, .table-wrap, .chart'))
            if (card.scrollWidth > card.clientWidth + 1) found.push(`${card.className} "${card.textContent?.slice(0, 40)}"`)
          return found
        })
        await page.screenshot({ path: `/tmp/console-${name}-${width}.png`, fullPage: true })
        expect({ name, width, overflowing }).toEqual({ name, width, overflowing: [] })
      }
    }
    expect(outside).toEqual([])
    expect(pageErrors).toEqual([])
  }, 90_000)
})
