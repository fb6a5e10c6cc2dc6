import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { blockOutside, launchChromium } from './support/browser'
import { mockCatalogEnv } from './support/mock-catalog'
import { type GatewayProcess, startProcess } from './support/process'
import { MockUpstream } from './upstream/mock-upstream'

/**
 * The compiled single binary, run where nothing of the project is on disk: PGlite's wasm and
 * data files and the migrations must all be inside it.
 */
const binary = resolve('dist/tollgate')
const adminToken = 'binary-test-admin-token'

/** The console bundled into the binary draws its dashboard in Chromium, loading nothing from outside. */
async function expectConsoleDrawn(base: string): Promise<void> {
  const browser = await launchChromium()
  try {
    const page = await browser.newPage()
    const outside: string[] = []
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await blockOutside(page, new URL(base).origin, outside)
    await page.goto(`${base}console`)
    await page.getByLabel('Admin token').fill(adminToken)
    await page.getByLabel('Admin token').press('Enter')
    await page.getByTestId('usage-breakdown').waitFor()
    expect(await page.getByTestId('usage-breakdown').locator('g.period').count()).toBe(30)
    await page.goto(`${base}console#/models`)
    await page.getByRole('cell', { name: 'test/cheap' }).first().waitFor()
    expect({ outside, errors }).toEqual({ outside: [], errors: [] })
  } finally {
    await browser.close()
  }
}

describe('compiled binary', () => {
  let workdir: string
  let gateway: GatewayProcess | undefined
  const upstream = new MockUpstream()

  beforeAll(async () => {
    const build = Bun.spawnSync(['bun', 'run', 'build'], { stdout: 'pipe', stderr: 'pipe' })
    if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`)
    workdir = mkdtempSync(join(tmpdir(), 'tollgate-binary-'))
    upstream.start()
  }, 120_000)
  afterAll(() => {
    upstream.stop()
    gateway?.child.kill('SIGKILL')
    rmSync(workdir, { recursive: true, force: true })
  })

  test('serves from an empty directory: admin API, wallet, a streamed billed chat, a video with a resized image, then the CLI on the same data', async () => {
    gateway = await startProcess([binary], { TOLLGATE_ADMIN_TOKEN: adminToken, ...mockCatalogEnv(upstream.baseUrl, upstream.baseUrl) }, workdir)
    const base = gateway.url
    const admin = (path: string, body: unknown) =>
      fetch(`${base}admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: JSON.stringify(body) }).then(
        (response) => response.json() as Promise<any>,
      )

    const account = await admin('/accounts', { name: 'binary' })
    await admin(`/accounts/${account.id}/credits`, { amount: 7.25 })
    const key = await admin('/keys', { account_id: account.id, env: 'prod' })
    const wallet = await fetch(`${base}v1/wallet`, { headers: { authorization: `Bearer ${key.key}` } })
    expect(wallet.status).toBe(200)
    expect(wallet.headers.get('x-request-id')).toStartWith('req_')
    expect(await wallet.json()).toMatchObject({ object: 'wallet', balance: 7.25, available: 7.25, payer: 'wallet' })
    expect(existsSync(join(workdir, 'data', 'PG_VERSION'))).toBe(true)

    // A streamed, billed chat completion through the binary.
    upstream.script({ text: 'from the binary', usage: { prompt_tokens: 10, completion_tokens: 3 } })
    const chat = await fetch(`${base}v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    })
    const streamed = await chat.text()
    expect(streamed).toContain('from ')
    expect(streamed.trim().endsWith('data: [DONE]')).toBe(true)

    // The image library works inside the binary: a reference image is resized for a video.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    upstream.script({ kind: 'video' })
    const video = await fetch(`${base}v1/videos/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/sora', prompt: 'a cat', seconds: 4, image: png }),
    })
    expect(video.status).toBe(200)
    expect(upstream.received.find((request) => request.path === '/v1/videos')!.body.input_reference_dimensions).toBe('1280x720')

    await expectConsoleDrawn(base)

    expect(await gateway.stop()).toBe(0)

    // What was committed survives the restart; the CLI reads it from the same embedded database.
    const ledger = Bun.spawnSync([binary, 'admin', 'ledger', '--account-id', account.id], { cwd: workdir, env: { PATH: process.env.PATH ?? '' } })
    expect(ledger.exitCode).toBe(0)
    const entries = JSON.parse(ledger.stdout.toString()).data as { kind: string; amount: number }[]
    // Two calls, each charged once; their credit was held (by a lease, the default) and what they did not use given back.
    expect(entries.filter((entry) => entry.kind === 'charge')).toHaveLength(2)
    const sum = (kinds: string[]) => entries.filter((entry) => kinds.includes(entry.kind)).reduce((total, entry) => total + entry.amount, 0)
    expect(sum(['hold'])).toBeGreaterThan(0)
    expect(sum(['charge', 'release', 'expire'])).toBeCloseTo(sum(['hold']), 9)
    expect(entries.at(-1)).toMatchObject({ kind: 'topup', amount: 7.25 })
  }, 120_000)
})
