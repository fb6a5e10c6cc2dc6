import type { PgliteAssets } from './pglite-assets'

/**
 * The messages between the gateway and its database thread (pglite-thread.ts, the gateway's
 * side; pglite-worker.ts, the thread's). The thread answers each request in the order sent.
 */
export type ThreadRequest = { id: number } & (
  | { op: 'open'; dataDir: string | undefined; assets: PgliteAssets }
  /** `keepText`: timestamps, dates and intervals come back as the server's text (Drizzle's reading), not as Dates. */
  | { op: 'query'; sql: string; params: unknown[]; rowMode: 'array' | 'object'; keepText: boolean }
  /** A rendered statement, prepared once on the thread (pglite-prepared.ts). */
  | { op: 'rows'; sql: string; params: unknown[] }
  | { op: 'exec'; sql: string }
  | { op: 'close' }
)

export type ThreadAnswer = { id: number } & ({ ok: true; result: unknown } | { ok: false; error: ThreadError })

/** A failure, as its message and the fields a database error carries (SQLSTATE `code`, `detail`, …). */
export interface ThreadError {
  message: string
  fields: Record<string, string | number | boolean>
}

/** What of an error crosses to the gateway: its message and its own plain fields. */
export function threadErrorOf(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { message: String(error), fields: {} }
  const fields: ThreadError['fields'] = {}
  for (const [name, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[name] = value
  }
  return { message: error.message, fields }
}

/** The error a failed request rejects with on the gateway's side. */
export function errorOfThread(error: ThreadError): Error {
  return Object.assign(new Error(error.message), error.fields)
}
