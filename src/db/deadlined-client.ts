import postgres, { type ParameterOrJSON, type PendingQuery, type Row, type Sql, type TransactionSql } from 'postgres'

/**
 * A postgres.js client whose every statement answers within a deadline (docs/operations.md#database-outages).
 *
 * The driver alone waits for ever on a connection that a partition left open (nothing comes
 * back, nothing closes it), waits up to its connect timeout (30 s by default) on one that
 * never completes its start-up, and backs off reconnecting for up to 20 s once connects have
 * failed a few times, so calls queued behind it wait long after the database is back. Here:
 * - a statement (and a transaction's BEGIN and COMMIT) not answered within `deadlineMs` fails
 *   with a transient error, and the whole client is replaced: its connections are destroyed,
 *   never reused, and the statements queued on them fail at once instead of waiting;
 * - so is a client whose connect failed (refused, timed out): the driver fails one queued
 *   statement per failed connect, and the rest would wait their turn through its backoff;
 * - the server cancels a statement of its own a little before the deadline
 *   (`statement_timeout`), so a slow statement on a live server fails alone, without taking
 *   the connections of others with it;
 * - connecting gives up after the deadline, and reconnects wait at most half a second.
 */
export class DeadlinedPostgres {
  private current: Sql
  /** What drizzle reads and changes on the client (its type parsers); every replacement gets the same. */
  get options(): Sql['options'] {
    return this.current.options
  }

  constructor(
    private readonly url: string,
    private readonly max: number,
    private readonly deadlineMs: number,
  ) {
    this.current = this.connect()
  }

  unsafe(query: string, parameters?: ParameterOrJSON<never>[], options?: { prepare?: boolean }): DeadlinedQuery {
    const client = this.current
    return new DeadlinedQuery(client.unsafe(query, parameters, options), this.deadlineMs, () => this.replace(client))
  }

  /** A transaction: its statements, its BEGIN and its COMMIT each within the deadline. */
  begin<T>(work: (transaction: DeadlinedTransaction) => Promise<T>): Promise<T> {
    const client = this.current
    const expired = () => this.replace(client)
    return new Promise<T>((resolve, reject) => {
      let timer = armDeadline(this.deadlineMs, reject, expired)
      client
        .begin(async (transaction) => {
          clearTimeout(timer)
          try {
            return await work(new DeadlinedTransaction(transaction, this.deadlineMs, expired))
          } finally {
            timer = armDeadline(this.deadlineMs, reject, expired)
          }
        })
        .then(
          (result) => {
            clearTimeout(timer)
            resolve(result as T)
          },
          (error: unknown) => {
            clearTimeout(timer)
            if (isConnectFailure(error)) expired()
            reject(error)
          },
        )
    })
  }

  end(timeoutSeconds: number): Promise<void> {
    return this.current.end({ timeout: timeoutSeconds })
  }

  private connect(): Sql {
    return postgres(this.url, {
      max: this.max,
      onnotice: () => {},
      // A long deadline (admin reports) is for running statements, not for reaching the server.
      connect_timeout: Math.max(1, Math.ceil(Math.min(this.deadlineMs, MAX_CONNECT_MS) / 1000)),
      // Seconds: 50 ms, doubling, at most 500 ms (the driver's own grows to 20 s).
      backoff: (retries: number) => Math.min(0.5, 0.025 * 2 ** retries),
      connection: { statement_timeout: Math.max(100, this.deadlineMs - SERVER_MARGIN_MS) },
    })
  }

  /** Drops a client whose statement went unanswered: new statements go to fresh connections. */
  private replace(expired: Sql): void {
    if (expired !== this.current) return
    const next = this.connect()
    Object.assign(next.options.parsers, expired.options.parsers)
    Object.assign(next.options.serializers, expired.options.serializers)
    this.current = next
    // A timeout of 0 destroys the connections now and fails what was queued on them.
    void expired.end({ timeout: 0 }).catch(() => {})
  }
}

/** The longest a connect may take, whatever the statements' deadline. */
const MAX_CONNECT_MS = 3_000

/** How much sooner than the client's deadline the server cancels a statement of its own. */
const SERVER_MARGIN_MS = 500

/** A statement not answered within its deadline: the database may be gone (a transient failure, 503). */
export class StatementDeadlineError extends Error {
  readonly code = 'STATEMENT_DEADLINE'
  constructor(deadlineMs: number) {
    super(`the database did not answer within ${deadlineMs} ms`)
    this.name = 'StatementDeadlineError'
  }
}

/** Connecting failed: the server is not there. The statements queued behind the connect would each wait for one more. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'CONNECT_TIMEOUT', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'])

function isConnectFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && CONNECT_FAILURES.has(code)
}

function armDeadline(deadlineMs: number, reject: (error: unknown) => void, expired: () => void): ReturnType<typeof setTimeout> {
  return setTimeout(() => {
    reject(new StatementDeadlineError(deadlineMs))
    expired()
  }, deadlineMs)
}

/** A statement of the driver (started when first awaited, as the driver's own) that fails at its deadline. */
export class DeadlinedQuery implements PromiseLike<Row[]> {
  private answer: Promise<Row[]> | undefined

  constructor(
    private readonly pending: PendingQuery<Row[]>,
    private readonly deadlineMs: number,
    private readonly expired: () => void,
  ) {}

  /** Rows as arrays of values, as drizzle asks for them. */
  values(): this {
    this.pending.values()
    return this
  }

  // biome-ignore lint/suspicious/noThenProperty: lazy like the driver's own statement, which starts when awaited, after drizzle has asked for .values()
  then<Fulfilled = Row[], Rejected = never>(
    onFulfilled?: ((value: Row[]) => Fulfilled | PromiseLike<Fulfilled>) | null,
    onRejected?: ((reason: unknown) => Rejected | PromiseLike<Rejected>) | null,
  ): Promise<Fulfilled | Rejected> {
    this.answer ??= new Promise<Row[]>((resolve, reject) => {
      const timer = armDeadline(this.deadlineMs, reject, this.expired)
      this.pending.then(
        (rows) => {
          clearTimeout(timer)
          resolve(rows)
        },
        (error: unknown) => {
          clearTimeout(timer)
          if (isConnectFailure(error)) this.expired()
          reject(error)
        },
      )
    })
    return this.answer.then(onFulfilled, onRejected)
  }
}

/** A transaction's client, as drizzle uses it: statements and savepoints, each within the deadline. */
export class DeadlinedTransaction {
  constructor(
    private readonly transaction: TransactionSql,
    private readonly deadlineMs: number,
    private readonly expired: () => void,
  ) {}

  unsafe(query: string, parameters?: ParameterOrJSON<never>[], options?: { prepare?: boolean }): DeadlinedQuery {
    return new DeadlinedQuery(this.transaction.unsafe(query, parameters, options), this.deadlineMs, this.expired)
  }

  savepoint<T>(work: (savepoint: DeadlinedTransaction) => Promise<T>): Promise<T> {
    return this.transaction.savepoint((inner) => work(new DeadlinedTransaction(inner, this.deadlineMs, this.expired))) as Promise<T>
  }
}
