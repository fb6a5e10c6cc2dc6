import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ConsolePages, expectNoOverflow } from '../support/console-pages'
import { testDatabases } from '../support/databases'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * The console as a dashboard (docs/operations.md#console), in headless Chromium against a served
 * gateway on a real database with two mock upstreams: charts, budgets, names, the Models page and
 * the key forms are checked against what the admin API answers, and every page is drawn at a
 * laptop's and a phone's width without anything overflowing its card.
 */
const WIDE = { width: 1400, height: 900 }
const WIDER = { width: 1920, height: 1080 }
const PHONE = { width: 390, height: 844 }

const adminHeaders = { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' }

describe('/console dashboard', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true, secondUpstream: true })
  const pages = new ConsolePages(() => served.origin, ADMIN_TOKEN)
  const { outside, pageErrors } = pages
  const seeded = { acme: '', globex: '', runner: '', batch: '', runnerSecret: '', batchSecret: '' }

  /** The API's answer as text: amounts compared as the API wrote them. */
  async function apiText(path: string): Promise<string> {
    const reply = await fetch(`${served.origin}/admin/v1${path}`, { headers: adminHeaders })
    expect(reply.status).toBe(200)
    return reply.text()
  }
  const numberIn = (text: string, field: string) => new RegExp(`"${field}":(-?[0-9.]+)`).exec(text)?.[1]

  /** A billed call; with `firstFails`, the first upstream keeps failing and the second answers. */
  async function chat(secret: string, model: string, firstFails = false): Promise<Response> {
    const usage = { prompt_tokens: 30, completion_tokens: 10 }
    if (!firstFails) served.upstream.script({ text: 'hello', usage })
    served.secondUpstream.script({ text: 'hello', usage })
    return fetch(`${served.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(secret), 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }),
    })
  }

  beforeAll(async () => {
    await pages.launch()
    const acme = await pages.api('POST', '/accounts', { name: 'Acme Robotics' })
    await pages.api('POST', `/accounts/${acme.id}/credits`, { amount: 50 })
    await pages.api('PATCH', `/accounts/${acme.id}`, { low_balance_threshold: 10 })
    const globex = await pages.api('POST', '/accounts', { name: 'Globex' })
    await pages.api('POST', `/accounts/${globex.id}/credits`, { amount: 1 })
    await pages.api('PATCH', `/accounts/${globex.id}`, { low_balance_threshold: 5 })
    const runner = await pages.api('POST', '/keys', { account_id: acme.id, env: 'prod', name: 'ci runner', quotas: { day: 0.001, month: 20 } })
    const batch = await pages.api('POST', '/keys', { account_id: globex.id, env: 'prod', name: 'batch jobs' })
    Object.assign(seeded, { acme: acme.id, globex: globex.id, runner: runner.id, batch: batch.id, runnerSecret: runner.key, batchSecret: batch.key })
    for (const [secret, model] of [
      [runner.key, 'test/cheap'],
      [runner.key, 'test/cheap'],
      [batch.key, 'test/smart'],
    ] as const) {
      expect((await chat(secret, model)).status).toBe(200)
    }
  }, 60_000)
  afterAll(async () => {
    await pages.close()
  })

  test('the overview stacks spend and requests by model, key and account over every period, the totals the API’s', async () => {
    const page = await pages.open(WIDE, { clipboard: true })
    await pages.visit(page, '#/overview')
    const today = new Date().toISOString().slice(0, 10)
    const chart = page.getByTestId('usage-breakdown')
    // 30 days, zero-filled: every day is drawn, today's total is the API's own amount.
    expect(await chart.locator('g.period').count()).toBe(30)
    const todayCost = numberIn(await apiText(`/usage?group_by=day&since=${today}`), 'cost') ?? ''
    expect(Number(todayCost)).toBeGreaterThan(0)
    expect(await chart.locator(`g.period[data-period="${today}"]`).getAttribute('data-total')).toBe(todayCost)
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
    expect(await chart.locator(`g.period[data-period="${yesterday}"]`).getAttribute('data-total')).toBe('0.000000')
    expect(await chart.locator(`g.period[data-period="${yesterday}"] rect[data-series]`).count()).toBe(0)
    // One series per model, stacked in today's column.
    expect((await chart.locator('.legend li').allTextContents()).map((text) => text.trim()).sort()).toEqual(['test/cheap', 'test/smart'])
    expect(await chart.locator(`g.period[data-period="${today}"] rect[data-series]`).count()).toBe(2)

    // By key, counting requests: the keys by name.
    await page.getByLabel('Stacked by').selectOption('key')
    await page.waitForURL(/by=key/)
    await page.getByLabel('Showing').selectOption('requests')
    await page.waitForURL(/measure=requests/)
    await page.locator('.loading').waitFor({ state: 'detached' })
    expect((await chart.locator('.legend li').allTextContents()).map((text) => text.trim()).sort()).toEqual(['batch jobs', 'ci runner'])
    expect(await chart.locator(`g.period[data-period="${today}"]`).getAttribute('data-total')).toBe('3')
    expect(await chart.locator(`g.period[data-period="${today}"] rect[data-series="ci runner"]`).count()).toBe(1)

    // By account, over 48 hours.
    await pages.visit(page, '#/overview?range=48h&by=account&measure=cost')
    expect(await chart.locator('g.period').count()).toBe(48)
    expect((await chart.locator('.legend li').allTextContents()).map((text) => text.trim()).sort()).toEqual(['Acme Robotics', 'Globex'])
    expect(pageErrors).toEqual([])
  }, 60_000)

  test('wallets and quotas are bars: spend against each limit, balance against its alert threshold', async () => {
    const page = await pages.open(WIDE, { clipboard: true })
    await pages.visit(page, '#/overview')
    const key = JSON.parse(await apiText(`/keys/${seeded.runner}`))
    const spentText = numberIn(await apiText(`/keys/${seeded.runner}`), 'day') ?? ''
    expect(key.quotas.day).toBe(0.001)
    const day = page.getByTestId(`quota-${seeded.runner}-day`)
    const dayBar = day.getByRole('progressbar')
    // Two calls of 0.00005 credits against 0.001 a day.
    expect(await dayBar.getAttribute('aria-valuetext')).toBe(`${Number(key.spent.day).toFixed(6)} of 0.001000 (${(key.spent.day / 0.001) * 100}%)`)
    expect(Number(await dayBar.getAttribute('aria-valuenow'))).toBe(Math.round((key.spent.day / 0.001) * 100))
    expect(spentText).not.toBe('')
    expect(await page.getByTestId(`quota-${seeded.runner}-month`).getByRole('progressbar').getAttribute('aria-valuetext')).toContain('of 20.000000')
    expect(await page.getByTestId(`quota-${seeded.runner}-week`).count()).toBe(0)
    // Globex has 1 credit less its call against an alert at 5: below, in the alarming tone.
    const wallets = page.getByRole('region', { name: 'Wallets' })
    const globex = wallets.getByRole('progressbar', { name: 'Wallet of Globex' })
    const available = numberIn(await apiText(`/accounts/${seeded.globex}`), 'available')
    expect(await globex.getAttribute('aria-valuetext')).toBe(`${available} available · alert below 5.000000`)
    expect(await globex.locator('.fill').getAttribute('class')).toBe('fill over')
    expect(await wallets.getByRole('progressbar', { name: 'Wallet of Acme Robotics' }).locator('.fill').getAttribute('class')).toBe('fill ok')
    expect(pageErrors).toEqual([])
  }, 60_000)

  test('the Usage chart draws every period of the selection, one without usage as zero', async () => {
    const page = await pages.open(WIDE, { clipboard: true })
    const day = (back: number) => new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10)
    await pages.visit(page, `#/usage?period=day&since=${day(4)}`)
    const bars = page.locator('rect.bar')
    expect(await bars.evaluateAll((rects) => rects.map((rect) => rect.getAttribute('data-label')))).toEqual([day(4), day(3), day(2), day(1), day(0)])
    const todayCost = numberIn(await apiText(`/usage?group_by=day&since=${day(0)}`), 'cost') ?? ''
    expect(await bars.evaluateAll((rects) => rects.map((rect) => rect.getAttribute('data-value')))).toEqual([
      '0.000000',
      '0.000000',
      '0.000000',
      '0.000000',
      todayCost,
    ])
    // Grouped by key as well: stacked by key, every period drawn.
    await pages.visit(page, `#/usage?period=day&by=key&since=${day(2)}`)
    const chart = page.getByTestId('usage-breakdown')
    expect(await chart.locator('g.period').evaluateAll((columns) => columns.map((column) => column.getAttribute('data-period')))).toEqual([
      day(2),
      day(1),
      day(0),
    ])
    expect((await chart.locator('.legend li').allTextContents()).map((text) => text.trim()).sort()).toEqual(['batch jobs', 'ci runner'])
    expect(pageErrors).toEqual([])
  }, 60_000)

  test('names stand for ids everywhere, with the id on hover and a click away', async () => {
    const page = await pages.open(WIDE, { clipboard: true })
    await pages.visit(page, `#/ledger?key_id=${seeded.runner}`)
    const entries = page.getByRole('region', { name: 'Entries, newest first' })
    await entries.getByText('Acme Robotics').first().waitFor()
    expect(await entries.textContent()).not.toContain(seeded.acme)
    const keyName = entries.locator(`[title="${seeded.runner}"]`).first()
    expect(await keyName.textContent()).toBe('ci runner')
    await entries
      .getByRole('button', { name: `Copy ${seeded.runner}` })
      .first()
      .click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(seeded.runner)
    // Usage by key and the keys page: names too.
    await pages.visit(page, '#/usage?period=day&by=key')
    const usage = page.getByRole('region', { name: 'Usage, newest first' })
    await usage.getByText('batch jobs').waitFor()
    expect(await usage.textContent()).not.toContain(seeded.batch)
    await pages.visit(page, '#/keys')
    const keys = page.getByRole('region', { name: 'Keys, newest first' })
    expect(await keys.locator(`[title="${seeded.globex}"]`).first().textContent()).toBe('Globex')
    expect(pageErrors).toEqual([])
  }, 60_000)

  test('the Models page shows aliases, routes in order, limits, prices and a route cooling down', async () => {
    const page = await pages.open(WIDE, { clipboard: true })
    // Three failures in a row on test/smart's first route (the second upstream answers each call).
    served.upstream.always({ kind: 'error', status: 503 })
    for (let call = 0; call < 3; call++) expect((await chat(seeded.batchSecret, 'test/smart', true)).status).toBe(200)
    served.upstream.reset()
    await pages.visit(page, '#/models')
    const models = JSON.parse(await apiText('/models'))
    const smart = models.data.find((model: { id: string }) => model.id === 'test/smart')
    const cooling = smart.routes[0].cooling_until
    expect(cooling).not.toBeNull()
    const row = page.getByRole('row').filter({ has: page.getByText('test/smart', { exact: true }) })
    expect(await row.getByTestId('route-test/smart-a').textContent()).toBe(`a · smart-a cooling until ${cooling.slice(0, 16).replace('T', ' ')} UTC`)
    expect(await row.getByTestId('route-test/smart-b').textContent()).toBe('b · smart-b ready')
    expect(await row.textContent()).toContain('tollgate/best')
    expect(await row.textContent()).toContain('4,000')
    expect(await row.textContent()).toContain('cache read / M tokens 0.3')
    const aliases = page.getByRole('region', { name: 'Aliases' })
    expect(await aliases.textContent()).toContain('test/smart → test/cheap')
    expect(pageErrors).toEqual([])
  }, 60_000)

  test('a key is created with every field, the form is emptied, and every field is edited', async () => {
    const page = await pages.open(WIDE, { clipboard: true })
    await pages.visit(page, `#/keys?account_id=${seeded.acme}`)
    const form = page.getByRole('form', { name: 'New key' })
    await form.getByLabel('Name').fill('nightly evals')
    await form.getByLabel('Environment').selectOption('dev')
    await form.getByLabel('Scopes').fill('chat, embeddings')
    await form.getByLabel('Allowed models').fill('test/*')
    await form.getByLabel('Expires at (UTC)').fill('2031-06-30T18:45')
    await form.getByLabel('Requests per minute').fill('120')
    await form.getByLabel('Tokens per minute').fill('90000')
    await form.getByLabel('Quota per day (credits, UTC day)').fill('1.5')
    await form.getByLabel('Quota per week (credits, ISO week)').fill('7')
    await form.getByLabel('Quota per month (credits)').fill('25.000001')
    await form.getByLabel('Allotment (credits)').fill('3.25')
    await form.getByLabel('Low-balance alert below (credits)').fill('0.5')
    await form.getByRole('button', { name: 'Create key' }).click()
    const secret = (await page.getByTestId('key-secret').textContent()) ?? ''
    expect(secret).toMatch(/^tollgate_sk_dev_/)
    const listed = (await pages.api('GET', `/keys?account_id=${seeded.acme}`)).data.find((key: { name: string }) => key.name === 'nightly evals')
    const created = await apiText(`/keys/${listed.id}`)
    expect(JSON.parse(created)).toMatchObject({
      account_id: seeded.acme,
      env: 'dev',
      scopes: ['chat', 'embeddings'],
      allowed_models: ['test/*'],
      expires_at: '2031-06-30T18:45:00.000Z',
      rpm: 120,
      tpm: 90000,
      quotas: { day: 1.5, week: 7 },
      low_balance_threshold: 0.5,
    })
    expect(numberIn(created, 'month')).toBe('25.000001')
    expect(numberIn(created, 'available')).toBe('3.250000')
    // The form is empty again, its account still chosen.
    for (const label of ['Name', 'Scopes', 'Allowed models', 'Expires at (UTC)', 'Requests per minute', 'Quota per month (credits)', 'Allotment (credits)'])
      expect({ label, value: await form.getByLabel(label).inputValue() }).toEqual({ label, value: '' })
    expect(await form.locator('select[name="key-account"]').inputValue()).toBe(seeded.acme)

    // Edit: the fields show the key's values; a changed one is sent, an emptied one cleared.
    await page.getByRole('button', { name: `Edit ${listed.id}` }).click()
    const editor = page.getByRole('form', { name: `Edit ${listed.id}` })
    expect(await editor.getByLabel('Quota per month (credits)').inputValue()).toBe('25.000001')
    expect(await editor.getByLabel('Expires at (UTC)').inputValue()).toBe('2031-06-30T18:45')
    await editor.getByLabel('Quota per week (credits, ISO week)').fill('8.75')
    await editor.getByLabel('Quota per day (credits, UTC day)').fill('')
    await editor.getByLabel('Requests per minute').fill('')
    await editor.getByLabel('Expires at (UTC)').fill('')
    await editor.getByLabel('Low-balance alert below (credits)').fill('1')
    await editor.getByLabel('Add to allotment (credits)').fill('0.75')
    await editor.getByRole('button', { name: 'Save key' }).click()
    await editor.getByText('Saved.').waitFor()
    const edited = await apiText(`/keys/${listed.id}`)
    expect(JSON.parse(edited)).toMatchObject({
      quotas: { day: null, week: 8.75 },
      rpm: null,
      tpm: 90000,
      expires_at: null,
      low_balance_threshold: 1,
      name: 'nightly evals',
    })
    expect(numberIn(edited, 'month')).toBe('25.000001')
    expect(numberIn(edited, 'available')).toBe('4.000000')
    // A wrong value is named, and nothing is sent.
    await page.getByRole('button', { name: `Edit ${listed.id}` }).click()
    await editor.getByLabel('Tokens per minute').fill('lots')
    await editor.getByRole('button', { name: 'Save key' }).click()
    await editor.getByText('Tokens per minute must be a whole number from 1.').waitFor()
    expect(JSON.parse(await apiText(`/keys/${listed.id}`)).tpm).toBe(90000)

    // The table fits its card at 1400 and 1920 px, "Revoke" and all.
    for (const viewport of [WIDE, WIDER]) {
      await page.setViewportSize(viewport)
      await pages.visit(page, '#/keys')
      await page.getByRole('button', { name: `Revoke ${listed.id}` }).waitFor()
      await expectNoOverflow(page, `keys at ${viewport.width}`)
      await page.screenshot({ path: `/tmp/console-keys-${viewport.width}.png`, fullPage: true })
    }
    expect(pageErrors).toEqual([])
  }, 90_000)

  test('every page fits a laptop and a phone, and nothing is loaded from outside', async () => {
    // Long names and lists wrap or are cut short with the whole on hover, never widening a card.
    const long = await pages.api('POST', '/accounts', { name: `Very Long Company Name ${'Holdings '.repeat(18)}`.trim() })
    await pages.api('POST', `/accounts/${long.id}/credits`, { amount: 2 })
    await pages.api('POST', '/keys', {
      account_id: long.id,
      env: 'prod',
      name: `key with a long name ${'and more words '.repeat(10)}`.trim(),
      allowed_models: Array.from({ length: 12 }, (_, index) => `vendor-${index}/*`),
      quotas: { day: 1, week: 5, month: 20 },
    })
    const hook = await pages.api('POST', '/webhooks', { url: 'http://127.0.0.1:9/none', description: 'Pager' })
    await pages.api('POST', `/webhooks/${hook.id}/test`)
    const ledger = await pages.api('GET', `/ledger?key_id=${seeded.runner}&kind=charge`)
    const requestId = ledger.data[0].request_id
    for (const [width, viewport] of [
      ['1400', WIDE],
      ['390', PHONE],
    ] as const) {
      const page = await pages.open(viewport, { clipboard: true })
      for (const [name, hash] of [
        ['overview', '#/overview'],
        ['overview-by-key', '#/overview?by=key&measure=requests'],
        ['accounts', `#/accounts?id=${seeded.acme}`],
        ['keys', '#/keys'],
        ['usage', '#/usage'],
        ['usage-by-model', '#/usage?period=day&by=model'],
        ['ledger', `#/ledger?request_id=${requestId}`],
        ['webhooks', `#/webhooks?id=${hook.id}`],
        ['models', '#/models'],
        ['health', '#/health'],
      ] as const) {
        await pages.visit(page, hash)
        if (name === 'webhooks') await page.getByRole('region', { name: 'Deliveries, newest first' }).waitFor()
        await expectNoOverflow(page, `${name} at ${width}`)
        await page.screenshot({ path: `/tmp/console-${name}-${width}.png`, fullPage: true })
      }
    }
    expect(outside).toEqual([])
    expect(pageErrors).toEqual([])
  }, 120_000)
})
