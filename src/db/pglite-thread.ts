import type { QueryOptions, Results } from '@electric-sql/pglite'
import type { Query } from 'drizzle-orm'
import { pgliteAssets } from './pglite-assets'
import { errorOfThread, type ThreadAnswer, type ThreadRequest } from './pglite-protocol'

/**
 * The thread's entry: next to this file when running from source. In the compiled binary every
 * module's URL is the binary's, at the root of the bundle (`bun run build` sets `--root .`), and
 * the thread's entry, an entry point of its own, sits at its path there.
 */
const COMPILED = import.meta.url.startsWith('file:///$bunfs/')
const WORKER_ENTRY = COMPILED ? new URL('./src/db/pglite-worker.ts', import.meta.url) : new URL('./pglite-worker.ts', import.meta.url)

/** Bun's Worker, which can be told whether it keeps the process alive. */
type ThreadWorker = Worker & { ref(): void; unref(): void }

/** What a request sends, without its id. */
type Sent = ThreadRequest extends infer Request ? (Request extends { id: number } ? Omit<Request, 'id'> : never) : never

/** The statements of one transaction: what Drizzle's PGlite session asks of its client inside one. */
export interface ThreadTransaction {
  query<Row>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<Row>>
}

/**
 * The embedded database, run on a thread of its own (pglite-worker.ts): PGlite executes each
 * statement synchronously, and on the event loop a batch of charges (a millisecond or two) or a
 * sync to disk (up to a dozen) delayed every request that arrived meanwhile. Here the gateway
 * only posts the statement and waits for the answer (some 25 µs each way).
 *
 * It offers what Drizzle's PGlite driver uses of a PGlite client (`query`, `transaction`) and
 * `exec`. A transaction has the database to itself: statements outside it wait until it ends,
 * as PGlite's own transactions make them. A thread that fails or stops fails every statement
 * waiting on it, and every later one, as a lost connection (CONNECTION_ENDED: 503).
 */
export class PgliteThread {
  private nextId = 1
  private readonly pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>()
  /** Set while a transaction holds the database: resolved when it ends. */
  private transactionEnded: Promise<void> | undefined
  private failure: Error | undefined

  private constructor(private readonly worker: ThreadWorker) {
    worker.onmessage = (event: MessageEvent) => this.settle(event.data as ThreadAnswer)
    worker.onerror = (event: ErrorEvent) => this.fail(`The embedded database's thread failed: ${event.message}`)
    worker.addEventListener('close', () => this.fail("The embedded database's thread stopped."))
    worker.unref()
  }

  static async open(dataDir: string | undefined): Promise<PgliteThread> {
    // A small heap: the thread's JavaScript is a message loop; its database lives in WebAssembly memory.
    const thread = new PgliteThread(new Worker(WORKER_ENTRY, { smol: true }) as ThreadWorker)
    try {
      await thread.send({ op: 'open', dataDir, assets: await pgliteAssets() })
    } catch (error) {
      thread.worker.terminate()
      throw error
    }
    return thread
  }

  query<Row>(sql: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<Row>> {
    return this.outsideTransactions(() => this.sendQuery<Row>(sql, params, options))
  }

  exec(sql: string): Promise<Results[]> {
    return this.outsideTransactions(() => this.send({ op: 'exec', sql }) as Promise<Results[]>)
  }

  /** A rendered statement's rows, the statement prepared once on the thread (pglite-prepared.ts). */
  rows<Row>(query: Query): Promise<Row[]> {
    return this.outsideTransactions(() => this.send({ op: 'rows', sql: query.sql, params: query.params }) as Promise<Row[]>)
  }

  async transaction<T>(body: (transaction: ThreadTransaction) => Promise<T>): Promise<T> {
    let end = () => {}
    // Claimed, and its first statement sent, in the same turn the database was found free.
    const begun = this.outsideTransactions(() => {
      this.transactionEnded = new Promise((resolve) => {
        end = resolve
      })
      return this.send({ op: 'exec', sql: 'begin' })
    })
    try {
      await begun
      try {
        const result = await body({ query: (sql, params = [], options) => this.sendQuery(sql, params, options) })
        await this.send({ op: 'exec', sql: 'commit' })
        return result
      } catch (error) {
        await this.send({ op: 'exec', sql: 'rollback' }).catch(() => {
          // The thread is gone: so is the transaction.
        })
        throw error
      }
    } finally {
      this.transactionEnded = undefined
      end()
    }
  }

  async close(): Promise<void> {
    try {
      await this.outsideTransactions(() => this.send({ op: 'close' }))
    } finally {
      this.failure ??= new Error('The embedded database is closed.')
      this.worker.terminate()
    }
  }

  /**
   * Sends what `send` sends once no transaction holds the database: in the same turn as the
   * check, so no transaction can begin between them and take the statement in.
   */
  private async outsideTransactions<T>(send: () => Promise<T>): Promise<T> {
    while (this.transactionEnded) await this.transactionEnded
    return send()
  }

  private async sendQuery<Row>(sql: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<Row>> {
    const request = { op: 'query', sql, params, rowMode: options?.rowMode ?? 'object', keepText: options?.parsers !== undefined } as const
    return (await this.send(request)) as Results<Row>
  }

  private send(request: Sent): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      // A statement under way keeps the process alive, as one run in process would.
      if (this.pending.size === 1) this.worker.ref()
      this.worker.postMessage({ ...request, id })
    })
  }

  private settle(answer: ThreadAnswer): void {
    const waiting = this.pending.get(answer.id)
    if (!waiting) return
    this.pending.delete(answer.id)
    if (this.pending.size === 0) this.worker.unref()
    if (answer.ok) waiting.resolve(answer.result)
    else waiting.reject(errorOfThread(answer.error))
  }

  private fail(message: string): void {
    this.failure ??= Object.assign(new Error(message), { code: 'CONNECTION_ENDED' })
    for (const waiting of this.pending.values()) waiting.reject(this.failure)
    this.pending.clear()
    this.worker.unref()
  }
}
