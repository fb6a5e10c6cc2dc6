import { type Browser, chromium, type Page } from 'playwright-core'

/**
 * Headless Chromium for the pages a person looks at: Debian's build (installed by .ci/run when
 * missing), never one downloaded at run time. Without it the launch fails and so does the
 * test: a missing browser is not a skip.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking'] })
}

/**
 * Aborts every request of the page that leaves `origin` (the gateway) as if the network were
 * down, and records its URL in `outside`: a page that works offline must pass with it empty.
 * `inside` receives the paths the page asked of the gateway. Blob and data URLs stay in the page.
 */
export async function blockOutside(page: Page, origin: string, outside: string[], inside: string[] = []): Promise<void> {
  await page.route('**/*', (route) => {
    const url = route.request().url()
    if (url.startsWith('blob:') || url.startsWith('data:')) return route.continue()
    if (new URL(url).origin === origin) {
      inside.push(new URL(url).pathname)
      return route.continue()
    }
    outside.push(url)
    return route.abort('internetdisconnected')
  })
}
