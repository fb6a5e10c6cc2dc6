import { ConfigError } from '../config/config-error'
import { type FromPrimary, type FromWorker, fromPrimary, WORKER_ENV } from './worker-messages'

/** How often a worker checks that its primary still exists, in case the channel's close went unnoticed. */
const PARENT_CHECK_MS = 1000
/** How long a starting worker waits for its primary to hand it the config. */
const CONFIG_DEADLINE_MS = 10_000

/**
 * A worker's side of the channel to its primary (docs/operations.md#workers): it says when it
 * listens, asks for shared rate-limit counts and for the other workers' metrics, and answers the
 * primary's requests for its own. Every question has a deadline: an answer that comes later is
 * dropped, and the caller goes on without it.
 */
export class WorkerLink {
  private nextId = 1
  private readonly pending = new Map<number, (message: FromPrimary) => void>()
  private snapshot: () => string = () => ''
  private reload: ((fileText: string | undefined) => void) | undefined
  /** A reload that came before `onReload` was set (the worker was still starting): applied then. */
  private missedReload: { fileText: string | undefined } | undefined

  private constructor(
    /** The worker's slot, 1..N: kept by a restarted worker, so log lines name the slot. */
    readonly index: number,
    private readonly send: (message: FromWorker) => void,
  ) {}

  /** The link of a process the primary started, or undefined for a single-process gateway. */
  static fromEnvironment(env: Record<string, string | undefined> = process.env): WorkerLink | undefined {
    const value = env[WORKER_ENV]
    if (value === undefined || value === '') return undefined
    const send = process.send?.bind(process)
    if (!/^[1-9][0-9]{0,2}$/.test(value) || !send) throw new ConfigError(`${WORKER_ENV} is set by the primary process for its workers only`)
    const link = new WorkerLink(Number(value), (message) => {
      // A primary that is gone cannot answer anyway: the caller's deadline covers it.
      try {
        send(message)
      } catch {}
    })
    process.on('message', (message: unknown) => link.receive(message))
    return link
  }

  listening(url: string): void {
    this.send({ kind: 'listening', url })
  }

  /** What this worker answers when another one gathers the instance's metrics. */
  answerMetricsWith(render: () => string): void {
    this.snapshot = render
  }

  /**
   * The config file's text the primary last loaded (undefined: the built-in catalogue), which a
   * worker starts from instead of the file on disk: a restarted worker runs what its siblings
   * run, even when the file has since been broken.
   */
  async configText(): Promise<string | undefined> {
    const answer = await this.ask((id) => ({ kind: 'config-request', id }), CONFIG_DEADLINE_MS)
    if (answer?.kind !== 'config')
      throw new ConfigError(`the primary process did not hand worker ${this.index} its config within ${CONFIG_DEADLINE_MS / 1000} s`)
    return answer.text ?? undefined
  }

  /** What the worker does when the primary reloads the instance: the text has loaded there already. */
  onReload(reload: (fileText: string | undefined) => void): void {
    this.reload = reload
    const missed = this.missedReload
    this.missedReload = undefined
    if (missed) reload(missed.fileText)
  }

  /** A SIGHUP sent to this worker: the primary reloads every worker, so they never differ. */
  requestReload(): void {
    this.send({ kind: 'reload-request' })
  }

  /** Adds to (or reads) a counter the primary keeps for every worker; undefined when it did not answer in time. */
  async counter(op: 'add' | 'read', name: string, amount: number, ttlMs: number, deadlineMs: number): Promise<number | undefined> {
    const answer = await this.ask((id) => ({ kind: 'counter', id, op, name, amount, ttlMs }), deadlineMs)
    return answer?.kind === 'counter-reply' ? answer.value : undefined
  }

  /** The other workers' metrics, with the number of workers the primary runs; undefined when it did not answer in time. */
  async gatherMetrics(deadlineMs: number): Promise<{ texts: string[]; workers: number } | undefined> {
    const answer = await this.ask((id) => ({ kind: 'metrics-gather', id }), deadlineMs)
    return answer?.kind === 'metrics-gathered' ? { texts: answer.texts, workers: answer.workers } : undefined
  }

  /**
   * Calls `gone` once when the primary is gone (killed outright: it had no chance to signal):
   * the channel closes, or the process is re-parented. A worker must not serve on as an orphan.
   */
  onPrimaryGone(gone: () => void): void {
    const parent = process.ppid
    let called = false
    const once = () => {
      if (called) return
      called = true
      clearInterval(check)
      gone()
    }
    process.on('disconnect', once)
    const check = setInterval(() => {
      if (process.ppid !== parent) once()
    }, PARENT_CHECK_MS)
    check.unref()
  }

  private ask(build: (id: number) => FromWorker, deadlineMs: number): Promise<FromPrimary | undefined> {
    const id = this.nextId++
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        resolve(undefined)
      }, deadlineMs)
      this.pending.set(id, (message) => {
        clearTimeout(timer)
        resolve(message)
      })
      this.send(build(id))
    })
  }

  private receive(raw: unknown): void {
    const message = fromPrimary(raw)
    if (!message) return
    if (message.kind === 'metrics-snapshot') {
      this.send({ kind: 'metrics-reply', id: message.id, text: this.snapshot() })
      return
    }
    if (message.kind === 'reload') {
      const fileText = message.text ?? undefined
      if (this.reload) this.reload(fileText)
      else this.missedReload = { fileText }
      return
    }
    const waiting = this.pending.get(message.id)
    this.pending.delete(message.id)
    waiting?.(message)
  }
}
