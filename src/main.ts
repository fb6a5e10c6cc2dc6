#!/usr/bin/env bun
import { runAdminCommand, adminUsage } from './admin/cli'
import { createApp } from './app'
import { SERVER_BODY_LIMIT } from './http/body-limits'
import { bufferedLog } from './http/buffered-log'
import { isLongRunning } from './http/long-requests'
import { ensureUpstreamConcurrency } from './http/upstream-concurrency'
import { ConfigError, loadConfig, type Config } from './config'
import { migrate } from './db/migrate'
import { logEvent } from './observability/log'
import { openConfiguredDatabase } from './db/open'
import { createServices } from './services'
import packageJson from '../package.json'

const USAGE = `usage: tollgate [serve]          serve the gateway (default)
       tollgate migrate          apply database migrations and exit
       tollgate admin <command>  run an admin operation on the database
       tollgate --version`

async function main(args: string[]): Promise<number> {
  const [command = 'serve', ...rest] = args
  if (command === '--version' || command === 'version') return print(packageJson.version)
  if (command === '--help' || command === 'help') return print(`${USAGE}\n\n${adminUsage()}`)
  if (!['serve', 'migrate', 'admin'].includes(command)) {
    console.error(USAGE)
    return 2
  }
  const config = loadConfig()
  if (command === 'admin' && rest.length === 0) return print(adminUsage(), 2)
  // Before anything opens a file or a socket: this may replace the process (see the module).
  if (command === 'serve') {
    const outcome = ensureUpstreamConcurrency(config.maxUpstreamConnections)
    if (outcome.kind === 'unavailable') {
      logEvent('warn', `upstream requests stay limited to Bun's default (256 at once): ${outcome.reason}; set BUN_CONFIG_MAX_HTTP_REQUESTS=${config.maxUpstreamConnections} to lift it`)
    }
  }
  const database = await openConfiguredDatabase(config)
  if (command === 'serve') return serve(config, database)
  try {
    if (command === 'migrate') {
      await migrate(database.db)
      return print('migrations applied')
    }
    return await runAdminCommand(rest, async () => createServices({ config, database }), (text) => console.log(text))
  } finally {
    await database.close()
  }
}

async function serve(config: Config, database: Awaited<ReturnType<typeof openConfiguredDatabase>>): Promise<number> {
  // A closed stdout (a supervisor gone) must not take the gateway down with it.
  process.stdout.on('error', () => {})
  const services = createServices({ config, database })
  // An embedded database has no other process: every open hold at start is a crashed run's.
  if (database.kind === 'pglite') await services.sweeper.expire({ everyOpenHold: true })
  services.sweeper.start()
  const log = bufferedLog((block) => process.stdout.write(block))
  const gateway = createApp(services, {
    log,
    version: packageJson.version,
  })
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    fetch(request, server) {
      if (isLongRunning(request)) server.timeout(request, 0)
      return gateway.handle(request)
    },
    // Streams and long generations keep a connection quiet for a while; 255 s is Bun's maximum.
    idleTimeout: 255,
    maxRequestBodySize: SERVER_BODY_LIMIT,
  })
  console.log(JSON.stringify({ level: 'info', message: 'listening', url: server.url.href, database: database.kind }))
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await server.stop()
  // Settlements still being retried (a database blip at the end of a call) get a last chance to land.
  await services.holds.drain(10_000)
  log.flush()
  services.close()
  await database.close()
  return 0
}

function print(text: string, code = 0): number {
  console.log(text)
  return code
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof ConfigError ? `config error: ${error.message}` : `error: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  },
)
