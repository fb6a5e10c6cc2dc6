import { afterAll, beforeAll } from 'bun:test'
import { MockUpstream } from '../upstream/mock-upstream'
import type { FreshDatabase, TestDatabase } from './databases'
import { startGateway, testConfig, type TestGateway } from './gateway'
import { mockCatalogEnv } from './mock-catalog'

/** What one describe block works with: its own fresh database, a gateway on it, and a mock upstream the catalogue points at. */
export interface GatewaySuite {
  readonly database: FreshDatabase
  readonly harness: TestGateway
  readonly upstream: MockUpstream
}

/**
 * Registers the set-up and tear-down of a GatewaySuite in the calling describe block: the
 * mock catalogue's providers all point at one mock upstream.
 */
export function gatewaySuite(kind: TestDatabase): GatewaySuite {
  let database: FreshDatabase | undefined
  let harness: TestGateway | undefined
  const upstream = new MockUpstream()
  beforeAll(async () => {
    upstream.start()
    database = await kind.open()
    harness = startGateway(database, { config: testConfig(mockCatalogEnv(upstream.baseUrl, upstream.baseUrl)) })
  })
  afterAll(async () => {
    harness?.services.close()
    upstream.stop()
    await database?.close()
  })
  return {
    get database() {
      if (!database) throw new Error('the suite has not started')
      return database
    },
    get harness() {
      if (!harness) throw new Error('the suite has not started')
      return harness
    },
    upstream,
  }
}
