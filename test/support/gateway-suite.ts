import { afterAll, beforeAll } from 'bun:test'
import { MockUpstream } from '../upstream/mock-upstream'
import type { FreshDatabase, TestDatabase } from './databases'
import { startGateway, type TestGateway, testConfig } from './gateway'
import { type InterruptibleDatabase, interruptible } from './interruptible-database'
import { mockCatalogEnv } from './mock-catalog'

/** What one describe block works with: its own fresh database, a gateway on it, and a mock upstream the catalogue points at. */
export interface GatewaySuite {
  readonly database: FreshDatabase
  readonly harness: TestGateway
  readonly upstream: MockUpstream
  /** With `secondUpstream`: the mock the catalogue's second providers (mockCatalogEnv's `b`) point at. */
  readonly secondUpstream: MockUpstream
  /** With `interruptible`: the gateway's connection to its database, which the test can cut. */
  readonly connection: InterruptibleDatabase
}

export interface GatewaySuiteOptions {
  /** The gateway reaches its database through a connection the test can cut (interruptible-database.ts). */
  interruptible?: { every?: boolean }
  /**
   * Environment added to the test configuration (e.g. TOLLGATE_CREDIT_LEASE), over the mock
   * catalogue's. A function is called once the upstreams have started, after the describe
   * block's own earlier beforeAll hooks (an identity provider they started, say).
   */
  env?: Record<string, string | undefined> | ((upstreams: { upstream: MockUpstream; second: MockUpstream | undefined }) => Record<string, string | undefined>)
  /** The catalogue's second providers get a mock upstream of their own (failover between two upstreams). */
  secondUpstream?: boolean
}

/**
 * Registers the set-up and tear-down of a GatewaySuite in the calling describe block: the
 * mock catalogue's providers all point at one mock upstream, or its second providers at a
 * second one.
 */
export function gatewaySuite(kind: TestDatabase, options: GatewaySuiteOptions = {}): GatewaySuite {
  let database: FreshDatabase | undefined
  let harness: TestGateway | undefined
  let connection: InterruptibleDatabase | undefined
  const upstream = new MockUpstream()
  const second = options.secondUpstream ? new MockUpstream() : undefined
  beforeAll(async () => {
    upstream.start()
    second?.start()
    database = await kind.open()
    connection = options.interruptible ? await interruptible(database, options.interruptible) : undefined
    harness = startGateway(
      { ...database, ...connection?.handle },
      {
        config: testConfig({
          ...mockCatalogEnv(upstream.baseUrl, (second ?? upstream).baseUrl),
          ...(typeof options.env === 'function' ? options.env({ upstream, second }) : options.env),
        }),
      },
    )
  })
  // Closing a Postgres pool whose connection a cut left behind can wait out its 5 s grace.
  afterAll(async () => {
    harness?.services.close()
    await connection?.close()
    upstream.stop()
    second?.stop()
    await database?.close()
  }, 30_000)
  return {
    get connection() {
      if (!connection) throw new Error('the suite was not made interruptible')
      return connection
    },
    get database() {
      if (!database) throw new Error('the suite has not started')
      return database
    },
    get harness() {
      if (!harness) throw new Error('the suite has not started')
      return harness
    },
    upstream,
    get secondUpstream() {
      if (!second) throw new Error('the suite has no second upstream')
      return second
    },
  }
}
