import { MockUpstream } from '../upstream/mock-upstream'
import { type FreshDatabase, testDatabases } from './databases'
import { startGateway, type TestGateway, testConfig } from './gateway'
import { mockCatalogEnv } from './mock-catalog'

/**
 * The gateway over real HTTP on loopback, in front of two mock upstreams (`a` and `b` of the
 * mock catalogue), for tests whose caller is a real client: an official SDK or a CLI.
 */
export interface ServedGateway {
  a: MockUpstream
  b: MockUpstream
  database: FreshDatabase
  harness: TestGateway
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  origin: string
  /** Every request answered, as `METHOD /path?query STATUS`. */
  seen: string[]
  /** The headers of the last request the gateway received. */
  lastHeaders: Record<string, string>
  close(): Promise<void>
}

/** With `oneUpstream`, a single mock upstream serves both `a` and `b` routes (`a === b`). */
export async function serveGateway(options: { oneUpstream?: boolean } = {}): Promise<ServedGateway> {
  const a = new MockUpstream().start()
  const b = options.oneUpstream ? a : new MockUpstream().start()
  const database = await testDatabases[0]!.open()
  const harness = startGateway(database, { config: testConfig(mockCatalogEnv(a.baseUrl, b.baseUrl)) })
  const served = { a, b, database, harness, seen: [] as string[], lastHeaders: {} as Record<string, string> }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      served.lastHeaders = Object.fromEntries(request.headers)
      const response = await harness.gateway.handle(request)
      const url = new URL(request.url)
      served.seen.push(`${request.method} ${url.pathname}${url.search} ${response.status}`)
      return response
    },
  })
  return Object.assign(served, {
    origin: `http://127.0.0.1:${server.port}`,
    async close() {
      server.stop(true)
      a.stop()
      if (b !== a) b.stop()
      harness.services.close()
      await database.close()
    },
  })
}
