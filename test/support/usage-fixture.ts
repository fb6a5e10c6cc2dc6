import { afterAll, beforeAll } from 'bun:test'
import { sql } from 'drizzle-orm'
import { microsToCredits } from '../../src/billing/money'
import { queryRows } from '../../src/db/rows'
import { MockUpstream } from '../upstream/mock-upstream'
import type { FreshDatabase, TestDatabase } from './databases'
import { bearer, startGateway, type TestGateway, testConfig } from './gateway'
import { IdentityProvider } from './identity-provider'
import { mockCatalogEnv } from './mock-catalog'

/**
 * A gateway whose clock the test sets, so billed calls land in chosen hours, days and months,
 * and the usage summaries the test expects, computed from the ledger's charge entries in
 * TypeScript of its own.
 */
export interface UsageFixture {
  readonly harness: TestGateway
  readonly database: FreshDatabase
  readonly upstream: MockUpstream
  readonly idp: IdentityProvider
  setClock(iso: string): void
}

export function usageFixture(kind: TestDatabase): UsageFixture {
  let clock = Date.parse('2026-11-15T12:00:00Z')
  let harness: TestGateway | undefined
  let database: FreshDatabase | undefined
  const upstream = new MockUpstream()
  const idp = new IdentityProvider()
  beforeAll(async () => {
    upstream.start()
    await idp.start()
    database = await kind.open()
    const config = testConfig({ ...mockCatalogEnv(upstream.baseUrl, upstream.baseUrl), TOLLGATE_OIDC_ISSUER: idp.issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience })
    harness = startGateway(database, { config, now: () => clock })
  })
  afterAll(async () => {
    harness?.services.close()
    upstream.stop()
    idp.stop()
    await database?.close()
  }, 30_000)
  return {
    get harness() {
      if (!harness) throw new Error('the fixture has not started')
      return harness
    },
    get database() {
      if (!database) throw new Error('the fixture has not started')
      return database
    },
    upstream,
    idp,
    setClock(iso: string) {
      clock = Date.parse(iso)
    },
  }
}

/** One billed chat call whose upstream reports the given usage. */
export async function billedCall(fixture: UsageFixture, key: string, model: string, usage: { prompt: number; completion: number; cached?: number }) {
  fixture.upstream.script({
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      ...(usage.cached ? { prompt_tokens_details: { cached_tokens: usage.cached } } : {}),
    },
  })
  const reply = await fixture.harness.call('POST', '/v1/chat/completions', {
    headers: bearer(key),
    body: { model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 },
  })
  if (reply.status !== 200) throw new Error(`billed call: ${reply.status} ${reply.text}`)
}

interface Charge {
  created_at: string
  account_id: string | null
  key_id: string | null
  user_sub: string | null
  model: string | null
  usage: Record<string, unknown> | string | null
  amount: string
  uncollected: string
}

const FIELDS = { account: 'account_id', key: 'key_id', user: 'user_sub', model: 'model' } as const
export type Dimension = keyof typeof FIELDS

function periodOf(createdAt: Date, unit: 'hour' | 'day' | 'month'): string {
  const iso = createdAt.toISOString()
  return unit === 'hour' ? `${iso.slice(0, 13)}:00:00Z` : unit === 'day' ? iso.slice(0, 10) : iso.slice(0, 7)
}

const count = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0)

/** The summary rows the API should answer, from the ledger's charge entries, sorted as the API sorts them. */
export async function expectedSummary(
  fixture: UsageFixture,
  unit: 'hour' | 'day' | 'month',
  dimensions: Dimension[],
  filter: { account_id?: string; key_id?: string; model?: string; since?: string; until?: string } = {},
): Promise<Record<string, unknown>[]> {
  const charges = await queryRows<Charge>(
    fixture.database.db,
    sql`select created_at, account_id, key_id, user_sub, model, usage, amount::text as amount, uncollected::text as uncollected from ledger_entries where kind = 'charge'`,
  )
  const groups = new Map<string, { key: string[]; requests: number; tokens: number[]; cost: bigint; uncollected: bigint }>()
  for (const charge of charges) {
    const createdAt = new Date(charge.created_at)
    if (filter.account_id && charge.account_id !== filter.account_id) continue
    if (filter.key_id && charge.key_id !== filter.key_id) continue
    if (filter.model && charge.model !== filter.model) continue
    if (filter.since && createdAt < new Date(filter.since)) continue
    if (filter.until && createdAt >= new Date(filter.until)) continue
    const key = [
      periodOf(createdAt, unit),
      ...(['account', 'key', 'user', 'model'] as Dimension[]).filter((d) => dimensions.includes(d)).map((d) => charge[FIELDS[d]] ?? ''),
    ]
    const id = JSON.stringify(key)
    const group = groups.get(id) ?? { key, requests: 0, tokens: [0, 0, 0, 0, 0], cost: 0n, uncollected: 0n }
    const usage = (typeof charge.usage === 'string' ? JSON.parse(charge.usage) : charge.usage) ?? {}
    group.requests++
    ;['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cache_write_1h_tokens'].forEach((field, index) => {
      group.tokens[index]! += count(usage[field])
    })
    group.cost += BigInt(charge.amount)
    group.uncollected += BigInt(charge.uncollected)
    groups.set(id, group)
  }
  const compare = (a: string[], b: string[]) => {
    for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return (a[index] ?? '') < (b[index] ?? '') ? 1 : -1
    return 0
  }
  return [...groups.values()]
    .sort((a, b) => compare(a.key, b.key))
    .map((group) => {
      const row: Record<string, unknown> = { period: group.key[0] }
      ;(['account', 'key', 'user', 'model'] as Dimension[])
        .filter((d) => dimensions.includes(d))
        .forEach((d, index) => {
          row[FIELDS[d]] = group.key[index + 1] || null
        })
      return {
        ...row,
        requests: group.requests,
        input_tokens: group.tokens[0],
        output_tokens: group.tokens[1],
        cache_read_tokens: group.tokens[2],
        cache_write_tokens: group.tokens[3],
        cache_write_1h_tokens: group.tokens[4],
        cost: microsToCredits(group.cost),
        uncollected: microsToCredits(group.uncollected),
      }
    })
}
