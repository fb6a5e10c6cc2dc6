/**
 * The database thread's entry (a Bun Worker started by pglite-thread.ts): the embedded database
 * runs here, so its statements (a batch of charges takes a millisecond or two, a sync to disk
 * up to a dozen) never stall the event loop requests share. It is its own entry point in the
 * compiled binary (`bun run build`).
 *
 * Requests run one at a time, in the order they came: a transaction's statements, sent one by
 * one, can never interleave with another's.
 */
import { PGlite, type QueryOptions, types } from '@electric-sql/pglite'
import { PglitePrepared } from './pglite-prepared'
import { type ThreadAnswer, type ThreadRequest, threadErrorOf } from './pglite-protocol'

declare var self: Worker

/** Drizzle's reading: these types come back as the server's text (drizzle-orm/pglite does the same). */
const asText = (value: string) => value
const KEEP_TEXT: QueryOptions['parsers'] = Object.fromEntries(
  // timestamp, timestamptz, interval, date, and numeric[], timestamp[], timestamptz[], interval[], date[]
  [types.TIMESTAMP, types.TIMESTAMPTZ, types.INTERVAL, types.DATE, 1231, 1115, 1185, 1187, 1182].map((oid) => [oid, asText]),
)

/**
 * PGlite's defaults, with shared buffers of 16 MB instead of 128 MB: they live in WebAssembly
 * memory, which never shrinks, and at 128 MB they held most of an idle gateway's memory (about
 * 120 MB of its 280 MB resident). The gateway's working set (wallets, open holds, recent ledger
 * pages) fits, and a page that misses is read from the OS page cache.
 */
const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB']

let client: PGlite | undefined
let prepared: PglitePrepared | undefined
let queue: Promise<unknown> = Promise.resolve()

self.onmessage = (event: MessageEvent) => {
  const request = event.data as ThreadRequest
  queue = queue.then(() => answer(request))
}

/** Runs a request and posts its answer; never rejects, so the queue goes on whatever happens. */
async function answer(request: ThreadRequest): Promise<void> {
  try {
    self.postMessage({ id: request.id, ok: true, result: await run(request) } satisfies ThreadAnswer)
  } catch (error) {
    // The statement failed, or its answer could not be posted (a value that cannot be copied).
    self.postMessage({ id: request.id, ok: false, error: threadErrorOf(error) } satisfies ThreadAnswer)
  }
}

async function run(request: ThreadRequest): Promise<unknown> {
  if (request.op === 'open') {
    client = await PGlite.create({ dataDir: request.dataDir, startParams: EMBEDDED_START_PARAMS, ...request.assets })
    prepared = new PglitePrepared(client)
    // Loading the engine's file system leaves its copies behind: collected once, not kept for the thread's life.
    Bun.gc(true)
    return null
  }
  if (!client || !prepared) throw new Error('The embedded database is not open.')
  switch (request.op) {
    case 'query':
      return client.query(request.sql, request.params, { rowMode: request.rowMode, ...(request.keepText ? { parsers: KEEP_TEXT } : {}) })
    case 'rows':
      return prepared.rows({ sql: request.sql, params: request.params })
    case 'exec':
      return client.exec(request.sql)
    case 'close':
      await client.close()
      client = undefined
      return null
  }
}
