import { Elysia } from 'elysia'
import { consolePage } from '../console/page'
import { NotFoundError } from '../errors/kinds'

const CACHE_FOREVER = 'public, max-age=31536000, immutable'
/** The page itself is small and names the current assets: never cached. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  // Only the gateway's own script, style and API: nothing else may load (docs/operations.md#console).
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
}

interface ConsoleAssets {
  page: string
  scriptPath: string
  script: string
  stylePath: string
  style: string
}

let loaded: Promise<ConsoleAssets> | undefined

/**
 * The assets are imported on the first request, not at start: bundling the browser code from
 * source (a macro, src/console/bundle.ts) then costs only processes that serve the console.
 */
function consoleAssets(): Promise<ConsoleAssets> {
  loaded ??= import('../console/assets').then(({ CONSOLE_SCRIPT, CONSOLE_STYLE }) => {
    const scriptPath = `/console/assets/${digest(CONSOLE_SCRIPT)}/console.js`
    const stylePath = `/console/assets/${digest(CONSOLE_STYLE)}/console.css`
    return { page: consolePage(scriptPath, stylePath), scriptPath, script: CONSOLE_SCRIPT, stylePath, style: CONSOLE_STYLE }
  })
  return loaded
}

function digest(text: string): string {
  return new Bun.CryptoHasher('sha256').update(text).digest('hex').slice(0, 16)
}

/**
 * The operator console (docs/operations.md#console): registered only with TOLLGATE_ADMIN_TOKEN,
 * so without it /console is the router's 404 like the admin API. The page and its assets are
 * public (they hold no data); everything the console shows comes from the admin API with the
 * token the operator signs in with.
 */
export function consoleEndpoints() {
  return new Elysia({ name: 'endpoints/console' })
    .get('/console', async () => new Response((await consoleAssets()).page, { headers: PAGE_HEADERS }), { detail: { hide: true } })
    .get(
      '/console/assets/:digest/:file',
      async ({ params }) => {
        const assets = await consoleAssets()
        const path = `/console/assets/${params.digest}/${params.file}`
        if (path === assets.scriptPath) return asset(assets.script, 'text/javascript; charset=utf-8')
        if (path === assets.stylePath) return asset(assets.style, 'text/css; charset=utf-8')
        throw new NotFoundError('Not found.')
      },
      { detail: { hide: true } },
    )
}

function asset(text: string, contentType: string): Response {
  return new Response(text, { headers: { 'content-type': contentType, 'cache-control': CACHE_FOREVER } })
}
