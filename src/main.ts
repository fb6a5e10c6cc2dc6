#!/usr/bin/env bun
import packageJson from '../package.json'
import { adminUsage, runAdminCommand } from './admin/cli'
import { createApp } from './app'
import { IpcHitCounter } from './auth/ipc-hit-counter'
import { parseArguments, UsageError } from './cli/arguments'
import { helpText } from './cli/help'
import { type Config, loadConfig } from './config/config'
import { ConfigError } from './config/config-error'
import { readConfigFile } from './config/config-file'
import { workerCount } from './config/workers'
import { EmbeddedMaintenance } from './db/embedded-maintenance'
import { TEMPLATE_COMMAND, writeEmbeddedTemplate } from './db/embedded-template'
import { migrate } from './db/migrate'
import { openConfiguredDatabase } from './db/open'
import { DatabaseUnreachableError } from './db/wait-for-database'
import { runDemo, type ServeOptions } from './demo/run-demo'
import { localMetrics, usePeerMetrics } from './endpoints/metrics'
import { SERVER_BODY_LIMIT } from './http/body-limits'
import { bufferedLog } from './http/buffered-log'
import { isLongRunning } from './http/long-requests'
import type { LogSink } from './http/request-log'
import { ensureUpstreamConcurrency } from './http/upstream-concurrency'
import { reloadCatalog } from './lifecycle/reload'
import { drainAndStop } from './lifecycle/shutdown'
import { logStartSummary } from './lifecycle/start-summary'
import { WorkerLink } from './lifecycle/worker-link'
import { ownCommand, runPrimary } from './lifecycle/workers'
import { eventLine, logEvent, tagEventLines } from './observability/log'
import { configureUpstreamClient } from './providers/registry'
import { createServices, type Services } from './services/services'
import { isResponsesUpgrade, responsesSocketServer } from './surfaces/responses/socket-server'

async function main(args: string[]): Promise<number> {
  // Hidden: the child process a first start runs initdb in (src/db/embedded-template.ts).
  if (args[0] === TEMPLATE_COMMAND && args[1]) {
    await writeEmbeddedTemplate(args[1])
    return 0
  }
  const invocation = parseArguments(args)
  const { command } = invocation
  if (command === 'version') return print(packageJson.version)
  if (command === 'help') return print(helpText())
  const worker = command === 'serve' ? WorkerLink.fromEnvironment() : undefined
  if (worker) tagEventLines({ worker: worker.index, pid: process.pid })
  // Flags beat the environment. A worker listens where its primary says (PORT): the primary has
  // already turned `--port 0` into the one free port every worker shares.
  const env = withFlags(process.env, { ...invocation, port: worker ? undefined : invocation.port })
  if (command === 'demo') return runDemo(env, serve, (text) => console.log(text))
  // A worker runs the config its primary last loaded, never the file as it is now (see workers.ts).
  const configText = worker ? await worker.configText() : readConfigFile(env)
  const loaded = loadConfig(env, configText)
  const config = invocation.workers === undefined ? loaded : { ...loaded, workers: workerCount(invocation.workers, '--workers', loaded.databaseUrl) }
  if (command === 'admin' && invocation.adminArgs.length === 0) return print(adminUsage(), 2)
  // Before anything opens a file or a socket: this may replace the process (see the module).
  if (command === 'serve') {
    const outcome = ensureUpstreamConcurrency(config.maxUpstreamConnections)
    if (outcome.kind === 'unavailable') {
      logEvent(
        'warn',
        `upstream requests stay limited to Bun's default (256 at once): ${outcome.reason}; set BUN_CONFIG_MAX_HTTP_REQUESTS=${config.maxUpstreamConnections} to lift it`,
      )
    }
  }
  // N > 1: this process is the primary and serves nothing itself; N = 1 is the plain gateway.
  // The primary has already re-executed itself above with the fetch variable set: its workers
  // inherit that environment, so they never re-execute (which would sever their IPC channel).
  if (command === 'serve' && !worker && config.workers > 1) {
    return runPrimary({ config, configText, workers: config.workers, version: packageJson.version, command: ownCommand() })
  }
  const database = await openConfiguredDatabase(config)
  if (command === 'serve') return serve(config, database, { worker, reloadConfig: () => loadConfig(env) })
  try {
    if (command === 'migrate') {
      await migrate(database.db)
      return print('migrations applied')
    }
    return await runAdminCommand(
      invocation.adminArgs,
      async () => createServices({ config, database }),
      (text) => console.log(text),
    )
  } finally {
    await database.close()
  }
}

async function serve(config: Config, database: Awaited<ReturnType<typeof openConfiguredDatabase>>, options: ServeOptions): Promise<number> {
  const { onListening, worker, reloadConfig } = options
  // A closed stdout (a supervisor gone) must not take the gateway down with it.
  process.stdout.on('error', () => {})
  configureUpstreamClient(config.upstreamClient, config.maxUpstreamConnections)
  const services = createServices({ config, database })
  // Signals are handled before the listener opens (docs/operations.md#shutdown): SIGTERM and
  // SIGINT drain, SIGHUP reloads the config (docs/operations.md#reload).
  const log = bufferedLog((block) => process.stdout.write(block))
  if (worker) joinInstance(worker, services, () => exitNow('primary gone', log))
  let draining = false
  const shutdownSignal = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      if (draining) exitNow(signal, log)
      draining = true
      resolve(signal)
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
  if (worker) worker.onReload((fileText) => reloadCatalog(services, () => loadConfig(process.env, fileText)))
  process.on('SIGHUP', () => {
    logEvent('info', worker ? 'SIGHUP: the primary reloads every worker' : 'SIGHUP: reloading the config')
    if (worker) worker.requestReload()
    else reloadCatalog(services, reloadConfig)
  })
  // Bun installs signal handlers on a later turn of the event loop: a signal sent the moment the
  // listening line appears would otherwise still kill the process outright.
  await new Promise((resolve) => setImmediate(resolve))
  // An embedded database has no other process: every open hold at start is a crashed run's.
  if (database.kind === 'pglite') await services.sweeper.expire({ everyOpenHold: true })
  services.sweeper.start()
  services.webhooks.start()
  services.idempotentCalls.start()
  const maintenance = database.kind === 'pglite' ? new EmbeddedMaintenance(database.db) : undefined
  maintenance?.start()
  const gateway = createApp(services, {
    log: worker ? workerLog(log, worker.index) : log,
    version: packageJson.version,
  })
  const responsesSocket = responsesSocketServer(gateway)
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    // The workers of `serve --workers N` share the port; the kernel spreads connections over them.
    reusePort: worker !== undefined,
    fetch(request, server) {
      // Codex's transport for the Responses API (docs/api.md#responses-over-websocket).
      if (isResponsesUpgrade(request)) return responsesSocket.upgrade(request, server)
      if (isLongRunning(request)) server.timeout(request, 0)
      return gateway.handle(request)
    },
    websocket: responsesSocket.websocket,
    // Streams and long generations keep a connection quiet for a while; 255 s is Bun's maximum.
    idleTimeout: 255,
    maxRequestBodySize: SERVER_BODY_LIMIT,
  })
  if (worker) {
    // The primary prints the one listening line and the summary once every worker listens.
    worker.listening(server.url.href)
  } else {
    console.log(eventLine('info', 'listening', { url: server.url.href, database: database.kind }))
    logStartSummary({ version: packageJson.version, config, listen: server.url.href })
  }
  onListening?.(server.url)
  // What starting left behind (the catalogue, the migrations' check, the database's template) is
  // garbage now: collected once, so an idle gateway does not keep a start-up heap.
  Bun.gc(true)
  const signal = await shutdownSignal
  await drainAndStop(signal, server, services, config)
  maintenance?.stop()
  // Spans of the last requests still queued for the trace collector get their chance to go out.
  await gateway.flushTraces()
  // Request activity still queued is written; a database still away keeps it (one attempt, then exit).
  await services.activity.flush()
  log.flush()
  services.close()
  await database.close()
  logEvent('info', 'exit', { code: 0 })
  return 0
}

/**
 * A second signal is an operator who will not wait, and a primary killed outright took the
 * instance with it: exit now, the sweep releases what was held.
 */
function exitNow(signal: NodeJS.Signals | 'primary gone', log: { flush(): void }): never {
  const why = signal === 'primary gone' ? 'the primary process is gone' : 'second signal during the drain'
  logEvent('warn', `${why}: exiting now, requests in flight are cut and their holds lapse to the sweep`, { signal })
  log.flush()
  process.exit(signal === 'SIGINT' ? 130 : 143)
}

/**
 * A worker of `serve --workers N` (docs/operations.md#workers): its rate-limit counts are kept by
 * the primary (unless Redis keeps them for every instance), its /metrics describe the whole
 * instance, and it does not outlive its primary.
 */
function joinInstance(worker: WorkerLink, services: Services, primaryGone: () => void): void {
  if (!services.config.redisUrl) services.rateLimiter.useCounter(new IpcHitCounter(worker))
  worker.answerMetricsWith(() => localMetrics(services))
  usePeerMetrics({ gather: (deadlineMs) => worker.gatherMetrics(deadlineMs) })
  worker.onPrimaryGone(primaryGone)
}

/** Request log lines of a worker name it (its slot and its process id): `{"worker":2,"pid":4711,…}`. */
function workerLog(log: LogSink, index: number): LogSink {
  const prefix = `{"worker":${index},"pid":${process.pid},`
  return (line) => log(line.startsWith('{"') ? `${prefix}${line.slice(1)}` : line)
}

/** The environment with the listener flags in place of PORT and HOST. */
function withFlags(env: NodeJS.ProcessEnv, flags: { port?: number; host?: string }): Record<string, string | undefined> {
  return { ...env, ...(flags.port === undefined ? {} : { PORT: String(flags.port) }), ...(flags.host === undefined ? {} : { HOST: flags.host }) }
}

function print(text: string, code = 0): number {
  console.log(text)
  return code
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportFailure(error)),
)

/**
 * The last words of a command that cannot go on: a usage mistake is told to the person who typed
 * it (exit 2); anything else is one JSON error line, as every other line of a gateway (exit 1).
 */
function reportFailure(error: unknown): number {
  if (error instanceof UsageError) {
    console.error(`error: ${error.message}\nrun \`tollgate --help\` for the commands, flags and environment variables`)
    return 2
  }
  if (error instanceof ConfigError) console.error(eventLine('error', `config error: ${error.message}`, error.fields))
  else if (error instanceof DatabaseUnreachableError) console.error(eventLine('error', error.message, error.fields))
  else console.error(eventLine('error', `error: ${error instanceof Error ? error.message : String(error)}`))
  return 1
}
