import { MemoryHitCounter } from '../auth/rate-limit'
import { type Config, loadConfig } from '../config/config'
import { readConfigFile } from '../config/config-file'
import { openConfiguredDatabase } from '../db/open'
import { eventLine, logEvent } from '../observability/log'
import { loadForReload } from './reload'
import { logStartSummary } from './start-summary'
import { type FromPrimary, type FromWorker, fromWorker, WORKER_ENV } from './worker-messages'

/**
 * The primary of `serve --workers N` (docs/operations.md#workers): a small process that serves
 * no request. It migrates the database once, picks the port, starts N workers that share it
 * (SO_REUSEPORT), keeps the rate-limit counts for all of them, relays metrics between them,
 * forwards signals, and restarts a worker that dies. It alone reads the config file: every
 * worker, a restarted one included, runs the text that last loaded here, so a file broken on
 * disk is refused once by SIGHUP and never reaches a worker.
 */

/** A worker that dies sooner than this after it started counts as a failure to start. */
export const FAST_FAILURE_MS = 10_000
/** After this many fast failures in a row of one worker, the primary stops the instance and exits 1. */
export const MAX_FAST_FAILURES = 5
/** The wait before restarting after the first fast failure; it doubles with each next one. */
const FIRST_BACKOFF_MS = 500
/** How long the primary waits for the other workers' metrics before answering with what came. */
const METRICS_DEADLINE_MS = 1000

interface Slot {
  index: number
  process: ReturnType<typeof Bun.spawn> | undefined
  startedAt: number
  fastFailures: number
  listened: boolean
  restart: ReturnType<typeof setTimeout> | undefined
}

export interface PrimaryOptions {
  config: Config
  /** The config file's text `config` was loaded from (undefined: the built-in catalogue). */
  configText: string | undefined
  workers: number
  version: string
  /** The command that starts this program (the worker runs the same one). */
  command: string[]
}

export async function runPrimary(options: PrimaryOptions): Promise<number> {
  process.stdout.on('error', () => {})
  // Once, before N workers would race to it (each still checks: migrating is idempotent).
  const database = await openConfiguredDatabase(options.config)
  await database.close()
  const port = options.config.port === 0 ? freePort(options.config.host) : options.config.port
  return new Primary(options, port).run()
}

interface MetricsGathering {
  texts: string[]
  waiting: Set<number>
  answer: (texts: string[]) => void
}

/** runPrimary's state once the database is ready: the worker slots, the shared counts, the stop and reload signals. */
class Primary {
  private readonly counter = new MemoryHitCounter(Date.now)
  private readonly slots: Slot[]
  private stopping: NodeJS.Signals | undefined
  private signalsSeen = 0
  private failed = false
  private announced = false
  private finish: (code: number) => void = () => {}
  private readonly gatherings = new Map<number, MetricsGathering>()
  private nextGathering = 1
  private lastLoaded: string | undefined

  constructor(
    private readonly options: PrimaryOptions,
    private readonly port: number,
  ) {
    this.lastLoaded = options.configText
    this.slots = Array.from({ length: options.workers }, (_, offset) => ({
      index: offset + 1,
      process: undefined,
      startedAt: 0,
      fastFailures: 0,
      listened: false,
      restart: undefined,
    }))
  }

  async run(): Promise<number> {
    const finished = new Promise<number>((resolve) => {
      this.finish = resolve
    })
    const onStopSignal = (signal: NodeJS.Signals) => this.stop(signal)
    process.on('SIGTERM', onStopSignal)
    process.on('SIGINT', onStopSignal)
    process.on('SIGHUP', () => this.reload('SIGHUP'))
    // Bun installs signal handlers on a later turn of the event loop (see main.ts).
    await new Promise((resolve) => setImmediate(resolve))
    const { workers } = this.options
    logEvent('info', 'starting workers', { workers, port: this.port })
    for (const slot of this.slots) this.spawn(slot)
    const code = await finished
    logEvent('info', 'exit', { code, workers })
    return code
  }

  private send(slot: Slot, message: FromPrimary): void {
    try {
      slot.process?.send(message)
    } catch {}
  }

  private receive(slot: Slot, raw: unknown): void {
    const message = fromWorker(raw)
    if (message) void this.handle(slot, message)
  }

  private async handle(slot: Slot, message: FromWorker): Promise<void> {
    const { workers, config, version } = this.options
    if (message.kind === 'listening') {
      slot.listened = true
      if (this.announced) logEvent('info', 'worker listening again', { worker: slot.index, pid: slot.process?.pid })
      else if (this.slots.every((each) => each.listened)) {
        this.announced = true
        const listen = message.url
        console.log(eventLine('info', 'listening', { url: listen, database: 'postgres', workers }))
        logStartSummary({ version, config, listen, workers })
      }
    } else if (message.kind === 'counter') {
      const value = message.op === 'add' ? await this.counter.add(message.name, message.amount, message.ttlMs) : await this.counter.read(message.name)
      this.send(slot, { kind: 'counter-reply', id: message.id, value })
    } else if (message.kind === 'config-request') {
      this.send(slot, { kind: 'config', id: message.id, text: this.lastLoaded ?? null })
    } else if (message.kind === 'reload-request') {
      this.reload('a worker got SIGHUP')
    } else if (message.kind === 'metrics-gather') {
      const texts = await this.gatherMetrics(slot)
      this.send(slot, { kind: 'metrics-gathered', id: message.id, texts, workers })
    } else {
      const gathering = this.gatherings.get(message.id)
      if (!gathering?.waiting.delete(slot.index)) return
      gathering.texts.push(message.text)
      if (gathering.waiting.size === 0) gathering.answer(gathering.texts)
    }
  }

  /** Every live worker's metrics but the asker's, as many as answer within the deadline. */
  private gatherMetrics(asker: Slot): Promise<string[]> {
    const others = this.slots.filter((slot) => slot !== asker && slot.process && slot.listened)
    if (others.length === 0) return Promise.resolve([])
    const id = this.nextGathering++
    return new Promise((resolve) => {
      const answer = (texts: string[]) => {
        clearTimeout(timer)
        this.gatherings.delete(id)
        resolve(texts)
      }
      const gathering: MetricsGathering = { texts: [], waiting: new Set(others.map((slot) => slot.index)), answer }
      const timer = setTimeout(() => answer(gathering.texts), METRICS_DEADLINE_MS)
      this.gatherings.set(id, gathering)
      for (const slot of others) this.send(slot, { kind: 'metrics-snapshot', id })
    })
  }

  private spawn(slot: Slot): void {
    slot.restart = undefined
    slot.listened = false
    slot.startedAt = Date.now()
    const child = Bun.spawn(this.options.command, {
      env: { ...process.env, PORT: String(this.port), [WORKER_ENV]: String(slot.index) },
      stdin: 'ignore',
      stdout: 'inherit',
      stderr: 'inherit',
      // Its own process group: a terminal's Ctrl-C reaches the primary only, which forwards it
      // once; a worker that got it twice would skip its drain.
      detached: true,
      serialization: 'json',
      ipc: (message) => this.receive(slot, message),
    })
    slot.process = child
    logEvent('info', 'worker started', { worker: slot.index, pid: child.pid })
    void child.exited.then(() => this.exited(slot, child))
  }

  private exited(slot: Slot, child: ReturnType<typeof Bun.spawn>): void {
    if (slot.process !== child) return
    slot.process = undefined
    slot.listened = false
    const fields = { worker: slot.index, pid: child.pid, code: child.exitCode, signal: child.signalCode }
    if (this.stopping || this.failed) {
      logEvent('info', 'worker exited', fields)
      if (this.allExited()) this.finish(this.failed ? 1 : this.signalsSeen > 1 ? exitCodeFor(this.stopping) : 0)
      return
    }
    const lived = Date.now() - slot.startedAt
    slot.fastFailures = lived < FAST_FAILURE_MS ? slot.fastFailures + 1 : 0
    if (slot.fastFailures >= MAX_FAST_FAILURES) {
      logEvent(
        'error',
        `worker ${slot.index} died ${MAX_FAST_FAILURES} times in a row within ${FAST_FAILURE_MS / 1000} s of starting: stopping the instance`,
        fields,
      )
      this.failed = true
      this.stopAll('SIGTERM')
      if (this.allExited()) this.finish(1)
      return
    }
    const delayMs = slot.fastFailures === 0 ? 0 : FIRST_BACKOFF_MS * 2 ** (slot.fastFailures - 1)
    logEvent('warn', 'worker died: restarting it; its open holds lapse to the sweep', { ...fields, restart_in_ms: delayMs })
    slot.restart = setTimeout(() => this.spawn(slot), delayMs)
  }

  private allExited(): boolean {
    return this.slots.every((each) => each.process === undefined)
  }

  private stopAll(signal: NodeJS.Signals): void {
    for (const slot of this.slots) {
      clearTimeout(slot.restart)
      slot.restart = undefined
      slot.process?.kill(signal)
    }
  }

  private stop(signal: NodeJS.Signals): void {
    this.signalsSeen += 1
    this.stopping ??= signal
    logEvent('info', this.signalsSeen > 1 ? 'second signal: forwarded, workers exit now' : 'stopping: every worker drains', { signal })
    this.stopAll(signal)
    if (this.allExited()) this.finish(0)
  }

  /** The file is read and checked here once; only a config that loads goes to the workers. */
  private reload(why: string): void {
    let fileText: string | undefined
    const next = loadForReload(() => {
      fileText = readConfigFile()
      return loadConfig(process.env, fileText)
    })
    if (!next) return
    this.lastLoaded = fileText
    logEvent('info', 'config loaded: every worker reloads it', { why })
    for (const slot of this.slots) this.send(slot, { kind: 'reload', text: this.lastLoaded ?? null })
  }
}

function exitCodeFor(signal: NodeJS.Signals | undefined): number {
  return signal === 'SIGINT' ? 130 : 143
}

/**
 * A free port of `host`, when the config asks for any (PORT=0): each worker would otherwise take
 * a different one. Bound and closed at once; the workers bind it a moment later.
 */
function freePort(host: string): number {
  const probe = Bun.listen({ hostname: host, port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

/**
 * The command line that started this process, to start a worker with. A compiled binary's
 * script lives in Bun's embedded file system (`/$bunfs/…`) and is run by the binary itself, so
 * only the user's arguments follow; `bun [flags] main.ts …` needs its flags and script repeated.
 */
export function ownCommand(): string[] {
  const compiled = Bun.main.startsWith('/$bunfs/')
  return compiled ? [process.execPath, ...process.argv.slice(2)] : [process.execPath, ...process.execArgv, ...process.argv.slice(1)]
}
