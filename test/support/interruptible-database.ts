import { type DatabaseHandle, openDatabase } from '../../src/db/client'
import type { FreshDatabase } from './databases'
import { flaky } from './flaky-database'
import { TcpProxy } from './tcp-proxy'

/** A handle onto a test database whose connection a test can take away and give back. */
export interface InterruptibleDatabase {
  handle: Pick<DatabaseHandle, 'db' | 'rows'>
  /** The database becomes unreachable: connections drop and new ones are refused. */
  cut(): void
  restore(): void
  close(): Promise<void>
}

/**
 * On Postgres the outage is a real one: the handle connects through a TCP proxy, which is cut.
 * The embedded database has no network, so its statements are made to fail instead: the
 * billing statements only, or every statement with `every`.
 */
export async function interruptible(database: FreshDatabase, options: { every?: boolean } = {}): Promise<InterruptibleDatabase> {
  if (database.url) {
    const target = new URL(database.url)
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432)).start()
    const proxied = await openDatabase({ url: proxy.urlFor(database.url) })
    return {
      handle: proxied,
      cut: () => proxy.cut(),
      restore: () => proxy.restore(),
      async close() {
        // Ending the proxied pool can wait out its 5 s grace for a connection the cut left behind.
        await proxied.close().catch(() => undefined)
        proxy.stop()
      },
    }
  }
  const switchable = flaky(database, options)
  return {
    handle: switchable.handle,
    cut: () => (switchable.down = true),
    restore: () => (switchable.down = false),
    close: async () => {},
  }
}
