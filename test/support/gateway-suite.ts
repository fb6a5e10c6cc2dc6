import { afterAll, beforeAll } from 'bun:test'
import type { DatabaseHandle } from '../../src/db/client'
import type { ServiceOptions } from '../../src/services/services'
import { isResponsesUpgrade, responsesSocketServer } from '../../src/surfaces/responses/socket-server'
import { MockUpstream } from '../upstream/mock-upstream'
import type { FreshDatabase, TestDatabase } from './databases'
import { ADMIN_TOKEN, startGateway, type TestGateway, testConfig } from './gateway'
import { type InterruptibleDatabase, interruptible } from './interruptible-database'
import { mockCatalogEnv } from './mock-catalog'
import { type GatewayProcess, startGatewayProcess } from './process'

/** What one describe block works with: its own fresh database, a gateway on it (or several), and a mock upstream the catalogue points at. */
export interface GatewaySuite {
  readonly database: FreshDatabase
  /** The gateway started before the block's tests (none with `gateway: false`). */
  readonly harness: TestGateway
  /** The mock upstream the catalogue's providers point at (none with `mockUpstream: false`). */
  readonly upstream: MockUpstream
  /** With `secondUpstream`: the mock the catalogue's second providers (mockCatalogEnv's `b`) point at. */
  readonly secondUpstream: MockUpstream
  /** With `interruptible`: the gateway's connection to its database, which the test can cut. */
  readonly connection: InterruptibleDatabase
  /** With `served`: the gateway's `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly origin: string
  /** With `served`: every request answered over HTTP, as `METHOD /path?query STATUS`. */
  readonly seen: string[]
  /** With `served`: the headers of the last request received over HTTP. */
  readonly lastHeaders: Record<string, string>
  /**
   * Another gateway on the suite's database (another instance of a deployment, or a gateway a
   * test starts for itself), configured as the suite's with `env` over it; closed after the
   * block, or earlier by the test.
   */
  instance(options?: InstanceOptions): TestGateway
  /** Another connection to the suite's database that the test can cut, for an instance of its own (`handle`); closed after the block. */
  cuttableConnection(options?: { every?: boolean }): Promise<InterruptibleDatabase>
  /**
   * A gateway process on the suite's database (Postgres only: its URL), with the suite's
   * catalogue and admin token and `env` over them; stopped after the block unless the test
   * stopped it.
   */
  process(env?: Record<string, string>): Promise<GatewayProcess>
}

export interface GatewaySuiteOptions {
  /** The gateway reaches its database through a connection the test can cut (interruptible-database.ts). */
  interruptible?: { every?: boolean }
  /**
   * Environment added to the test configuration (e.g. TOLLGATE_CREDIT_LEASE), over the mock
   * catalogue's. A function (async or not) is called once the upstreams have started, after
   * the describe block's own earlier beforeAll hooks (an identity provider they started, say).
   */
  env?:
    | Record<string, string | undefined>
    | ((upstreams: {
        upstream: MockUpstream
        second: MockUpstream | undefined
      }) => Record<string, string | undefined> | Promise<Record<string, string | undefined>>)
  /** The catalogue's second providers get a mock upstream of their own (failover between two upstreams). */
  secondUpstream?: boolean
  /** The gateway is also served over real HTTP on loopback, for callers that are real clients (an official SDK, a CLI, a browser). */
  served?: boolean
  /** Fields added to named providers of the mock catalogue (mockCatalogEnv's `providerSettings`). */
  providerSettings?: Record<string, Record<string, unknown>>
  /** No mock upstream is started and the mock catalogue is not configured: the gateway serves the built-in catalogue, or the config file `env` names. */
  mockUpstream?: false
  /** The block starts its gateways itself, with `instance()`: none is started before its tests. */
  gateway?: false
  /**
   * Parts of the gateways' database handle replaced (a statement runner that watches, or fails),
   * made once the database is open from the handle they would use otherwise (with
   * `interruptible`, the connection the test cuts).
   */
  handle?: (database: FreshDatabase) => Partial<DatabaseHandle>
  /** The clock of the suite's gateways (instances may have their own). */
  now?: () => number
  /** How the suite's gateways wait for and retry a closing (the hold book's defaults otherwise). */
  closings?: ServiceOptions['closings']
}

export interface InstanceOptions {
  /** Environment over the suite's. */
  env?: Record<string, string | undefined>
  /** Its clock; the suite's by default. */
  now?: () => number
  /** Parts of the database handle replaced, over the suite's (a connection of its own, say). */
  handle?: Partial<DatabaseHandle>
}

/**
 * Registers the set-up and tear-down of a GatewaySuite in the calling describe block (or file):
 * the mock catalogue's providers all point at one mock upstream, or its second providers at a
 * second one. One shape for every test that starts a gateway: one gateway per block, several
 * instances on one database (`instance()`, with `gateway: false` when each test starts its
 * own), the gateway over real HTTP (`served`), or gateway processes (`process()`). Everything it
 * started is stopped after the block, in order: processes, gateways, connections, upstreams, the
 * database.
 */
export function gatewaySuite(kind: TestDatabase, options: GatewaySuiteOptions = {}): GatewaySuite {
  let database: FreshDatabase | undefined
  let harness: TestGateway | undefined
  let connection: InterruptibleDatabase | undefined
  let env: Record<string, string | undefined> = {}
  let replaced: Partial<DatabaseHandle> | undefined
  const instances: TestGateway[] = []
  const processes: GatewayProcess[] = []
  const connections: InterruptibleDatabase[] = []
  let server: ReturnType<typeof Bun.serve> | undefined
  const seen: string[] = []
  let lastHeaders: Record<string, string> = {}
  const upstream = options.mockUpstream === false ? undefined : new MockUpstream()
  const second = options.secondUpstream ? new MockUpstream() : undefined
  const started = () => {
    if (!database) throw new Error('the suite has not started')
    return database
  }
  const catalogEnv = () => (upstream ? mockCatalogEnv(upstream.baseUrl, (second ?? upstream).baseUrl, options.providerSettings) : {})
  // Unpacking a database on a busy machine can take seconds.
  beforeAll(async () => {
    upstream?.start()
    second?.start()
    database = await kind.open()
    connection = options.interruptible ? await interruptible(database, options.interruptible) : undefined
    env = {
      ...catalogEnv(),
      ...(typeof options.env === 'function'
        ? await options.env({
            get upstream() {
              return suite.upstream
            },
            second,
          })
        : options.env),
    }
    replaced = options.handle?.({ ...database, ...connection?.handle })
    if (options.gateway !== false)
      harness = startGateway({ ...database, ...connection?.handle, ...replaced }, { config: testConfig(env), now: options.now, closings: options.closings })
    const served = options.served ? harness : undefined
    if (served) {
      const responsesSocket = responsesSocketServer(served.gateway)
      server = Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        websocket: responsesSocket.websocket,
        fetch: async (request, bunServer) => {
          lastHeaders = Object.fromEntries(request.headers)
          if (isResponsesUpgrade(request)) {
            const refusal = await responsesSocket.upgrade(request, bunServer)
            seen.push(`WEBSOCKET /v1/responses ${refusal?.status ?? 101}`)
            return refusal
          }
          const response = await served.gateway.handle(request)
          const url = new URL(request.url)
          seen.push(`${request.method} ${url.pathname}${url.search} ${response.status}`)
          return response
        },
      })
    }
  }, 30_000)
  // Closing a Postgres pool whose connection a cut left behind can wait out its 5 s grace.
  afterAll(async () => {
    server?.stop(true)
    await Promise.all(processes.map((child) => (child.child.exitCode === null ? child.stop() : child.child.exited)))
    for (const instance of instances) instance.services.close()
    harness?.services.close()
    await connection?.close()
    for (const cuttable of connections) await cuttable.close()
    upstream?.stop()
    second?.stop()
    await database?.close()
  }, 30_000)
  const suite: GatewaySuite = {
    get connection() {
      if (!connection) throw new Error('the suite was not made interruptible')
      return connection
    },
    get database() {
      return started()
    },
    get harness() {
      if (!harness) throw new Error(options.gateway === false ? 'the suite starts no gateway of its own' : 'the suite has not started')
      return harness
    },
    get upstream() {
      if (!upstream) throw new Error('the suite has no mock upstream')
      return upstream
    },
    get origin() {
      if (!server) throw new Error(options.served ? 'the suite has not started' : 'the suite was not served over HTTP')
      return `http://127.0.0.1:${server.port}`
    },
    seen,
    get lastHeaders() {
      return lastHeaders
    },
    get secondUpstream() {
      if (!second) throw new Error('the suite has no second upstream')
      return second
    },
    instance(instance = {}) {
      const gateway = startGateway(
        { ...started(), ...connection?.handle, ...replaced, ...instance.handle },
        {
          config: testConfig({ ...env, ...instance.env }),
          now: instance.now ?? options.now,
          closings: options.closings,
        },
      )
      instances.push(gateway)
      return gateway
    },
    async cuttableConnection(connectionOptions = {}) {
      const cuttable = await interruptible(started(), connectionOptions)
      connections.push(cuttable)
      return cuttable
    },
    async process(extra = {}) {
      const url = started().url
      if (!url) throw new Error('a gateway process needs a database it can reach: Postgres')
      const defined = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined))
      const child = await startGatewayProcess({ ...defined, DATABASE_URL: url, TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN, ...extra })
      processes.push(child)
      return child
    },
  }
  return suite
}
