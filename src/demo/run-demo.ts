import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Config, loadConfig } from '../config/config'
import type { DatabaseHandle } from '../db/client'
import { openConfiguredDatabase } from '../db/open'
import type { WorkerLink } from '../lifecycle/worker-link'
import { logEvent } from '../observability/log'
import { createServices } from '../services/services'
import { demoCatalogue } from './demo-catalogue'
import { startEchoProvider } from './echo-provider'
import { demoInstructions } from './instructions'
import { seedDemoAccount } from './seed'

export interface ServeOptions {
  /** Told once the gateway listens. */
  onListening?: (url: URL) => void
  /** The channel to the primary, in a worker of `serve --workers N`. */
  worker?: WorkerLink
  /** What SIGHUP loads: the environment and the config file, as this start read them. */
  reloadConfig: () => Config
}

/** The serve path of `tollgate serve`. */
export type Serve = (config: Config, database: DatabaseHandle, options: ServeOptions) => Promise<number>

type Env = Record<string, string | undefined>

/**
 * `tollgate demo` (docs/operations.md#demo): the echo provider, a catalogue file naming it, the
 * embedded database, a funded account and key, then the ordinary serve path until a signal,
 * with instructions printed once it listens. Everything the demo made up is deleted at the end.
 *
 * The data directory is a fresh one under the OS temp dir unless TOLLGATE_DATA_DIR is set: a
 * demo must not touch ./data, the operator's embedded database (locked while a gateway runs
 * on it), and a fresh one makes every run start the same. DATABASE_URL is ignored for the same
 * reason: a demo account has no place on a real Postgres.
 */
export async function runDemo(env: Env, serve: Serve, out: (text: string) => void): Promise<number> {
  const workspace = mkdtempSync(join(tmpdir(), 'tollgate-demo-'))
  // A second Ctrl-C exits at once (main.ts), past the `finally` below: the exit itself removes it.
  const removeWorkspace = () => rmSync(workspace, { recursive: true, force: true })
  process.on('exit', removeWorkspace)
  const echo = startEchoProvider()
  try {
    const ownDataDir = env.TOLLGATE_DATA_DIR === undefined || env.TOLLGATE_DATA_DIR === ''
    const dataDir = ownDataDir ? join(workspace, 'data') : (env.TOLLGATE_DATA_DIR ?? '')
    const catalogPath = join(workspace, 'demo-catalogue.json')
    writeFileSync(catalogPath, `${JSON.stringify(demoCatalogue(echo.baseUrl), null, 2)}\n`)
    const generatedAdminToken = env.TOLLGATE_ADMIN_TOKEN ? undefined : `demo-admin-${randomBytes(12).toString('hex')}`
    // The ordinary config checks, on the demo's catalogue file and data directory. A reload
    // (SIGHUP, which a closing terminal sends too) loads the same: the demo's key must never
    // reach the real providers whose credentials the environment may hold.
    const demoEnv = {
      ...env,
      TOLLGATE_CONFIG: catalogPath,
      TOLLGATE_DATA_DIR: dataDir,
      DATABASE_URL: undefined,
      TOLLGATE_ADMIN_TOKEN: env.TOLLGATE_ADMIN_TOKEN || generatedAdminToken,
    }
    const config = loadConfig(demoEnv)
    const database = await openConfiguredDatabase(config)
    let account: Awaited<ReturnType<typeof seedDemoAccount>>
    try {
      const services = createServices({ config, database })
      account = await seedDemoAccount(services)
      services.close()
    } catch (error) {
      await database.close()
      throw error
    }
    const instructions = (url: URL) =>
      demoInstructions({
        gatewayUrl: url.href,
        echoBaseUrl: echo.baseUrl,
        dataDir,
        temporaryData: ownDataDir,
        key: account.key,
        generatedAdminToken,
        ignoredDatabaseUrl: Boolean(env.DATABASE_URL),
        exposedHost: isLoopback(config.host) ? undefined : config.host,
      })
    if (!isLoopback(config.host)) {
      logEvent('warn', `the demo listens on ${config.host}, beyond this machine: anyone who reaches it can use the printed key and admin token`, {
        host: config.host,
      })
    }
    // Printed on the next turn of the event loop, after serve has set up its signal handlers: a
    // reader who acts on the instructions at once (Ctrl-C included) finds the gateway ready for it.
    return await serve(config, database, {
      onListening: (url) => setImmediate(() => out(instructions(url))),
      reloadConfig: () => loadConfig(demoEnv),
    })
  } finally {
    echo.stop()
    removeWorkspace()
    process.off('exit', removeWorkspace)
  }
}

/** Whether a listening address is this machine only: 127.0.0.0/8, ::1 or localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || /^::ffff:127\./.test(bare)
}
