import { expect } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { blockOutside, launchChromium } from './browser'
import { bearer } from './gateway'

/**
 * The console as its tests drive it: a headless Chromium signed in with the admin token, every
 * request that leaves the gateway aborted and recorded in `outside`, every page error recorded
 * in `pageErrors` (a test ends by expecting both empty), and the admin API beside it for what
 * the pages are compared with.
 */
export class ConsolePages {
  readonly outside: string[] = []
  readonly pageErrors: string[] = []
  private browser: Browser | undefined

  constructor(
    /** The served gateway's origin, known once its suite has started. */
    private readonly origin: () => string,
    private readonly adminToken: string,
  ) {}

  async launch(): Promise<void> {
    this.browser = await launchChromium()
  }

  async close(): Promise<void> {
    await this.browser?.close()
  }

  /** A new page at `viewport`, signed in. */
  async open(viewport: { width: number; height: number }, options: { clipboard?: boolean; downloads?: boolean } = {}): Promise<Page> {
    if (!this.browser) throw new Error('launch() the browser first')
    const context = await this.browser.newContext({ viewport, acceptDownloads: options.downloads ?? false })
    if (options.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: this.origin() })
    const page = await context.newPage()
    await blockOutside(page, this.origin(), this.outside)
    page.on('pageerror', (error) => this.pageErrors.push(error.message))
    await page.goto(`${this.origin()}/console`)
    await page.getByLabel('Admin token').fill(this.adminToken)
    await page.getByLabel('Admin token').press('Enter')
    await page.getByRole('navigation', { name: 'Console' }).waitFor()
    return page
  }

  /** Goes to `hash` (loaded afresh when the page is there already) and waits until it has drawn itself; a page that shows an error fails the test. */
  async visit(page: Page, hash: string): Promise<void> {
    const url = `${this.origin()}/console${hash}`
    if (page.url() === url) await page.reload()
    else await page.goto(url)
    await page.locator('main h1').first().waitFor()
    await page.locator('.loading').waitFor({ state: 'detached' })
    const failure = page.locator('main .notice.error')
    if ((await failure.count()) > 0) throw new Error(`${hash}: ${await failure.first().textContent()}`)
  }

  /** An admin API call that must succeed; its JSON answer. */
  async api(method: string, path: string, body?: unknown): Promise<any> {
    const reply = await fetch(`${this.origin()}/admin/v1${path}`, {
      method,
      headers: { ...bearer(this.adminToken), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    expect({ path, ok: reply.ok }).toEqual({ path, ok: true })
    return reply.json()
  }
}

/** Nothing wider than the window, no card wider than itself, and every button inside its card. */
export async function expectNoOverflow(page: Page, what: string): Promise<void> {
  const overflowing = await page.evaluate(() => {
    const found: string[] = []
    if (document.documentElement.scrollWidth > window.innerWidth) found.push(`the page (${document.documentElement.scrollWidth}px)`)
    for (const card of document.querySelectorAll<HTMLElement>('.card, .table-wrap, .chart'))
      if (card.scrollWidth > card.clientWidth + 1)
        found.push(`${card.className} "${card.textContent?.slice(0, 40)}" (${card.scrollWidth} > ${card.clientWidth})`)
    for (const button of document.querySelectorAll<HTMLElement>('main button')) {
      const frame = button.closest<HTMLElement>('.card, .table-wrap')
      if (!frame) continue
      const [inner, outer] = [button.getBoundingClientRect(), frame.getBoundingClientRect()]
      if (inner.right > outer.right + 1 || inner.left < outer.left - 1) found.push(`button "${button.textContent}" outside its card`)
    }
    return found
  })
  expect({ what, overflowing }).toEqual({ what, overflowing: [] })
}
