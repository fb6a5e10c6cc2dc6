import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { queryRows } from '../../src/db/rows'
import { testDatabases } from '../support/databases'
import { bearer, LEASE_MODES } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

/**
 * A tenant with no credit sends requests whose worst case overflows any integer, at the same
 * time as another tenant's ordinary traffic. The attacker gets 4xx answers; the victim sees
 * only 200s, and no hold is left behind.
 */
const ATTACKS: { name: string; path: string; headers?: Record<string, string>; body: object }[] = [
  {
    name: 'chat max_tokens 1e300',
    path: '/v1/chat/completions',
    body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1e300 },
  },
  {
    name: 'messages max_tokens 1e18',
    path: '/v1/messages',
    body: { model: 'claude-sonnet-4-5', max_tokens: 1e18, messages: [{ role: 'user', content: 'hi' }] },
  },
  {
    name: 'web search max_uses 1e300',
    path: '/v1/messages',
    body: {
      model: 'claude-sonnet-4-5',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1e300 }],
    },
  },
  { name: 'Veo duration_seconds 1e20', path: '/v1/videos/generations', body: { model: 'google/veo-test', prompt: 'a cat', duration_seconds: 1e20 } },
]

for (const kind of testDatabases)
  for (const mode of LEASE_MODES) {
    describe(`a hostile tenant cannot hurt another (${kind.kind}, ${mode.name})`, () => {
      const suite = gatewaySuite(kind, { env: mode.env })

      test('overflowing requests from a zero-credit key, concurrent with a victim: the victim sees only 200s', async () => {
        const victim = await suite.harness.key({ account_id: (await suite.harness.account(1000)).id })
        const attacker = await suite.harness.key({ account_id: (await suite.harness.account(0)).id })
        const rounds = 40
        const victimCalls: Promise<{ status: number }>[] = []
        const attackerCalls: Promise<{ status: number; text: string }>[] = []
        for (let round = 0; round < rounds; round++) {
          for (const attack of ATTACKS) {
            attackerCalls.push(suite.harness.call('POST', attack.path, { headers: bearer(attacker.key), body: attack.body }))
          }
          victimCalls.push(
            suite.harness.call('POST', '/v1/chat/completions', {
              headers: bearer(victim.key),
              body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 },
            }),
          )
          victimCalls.push(
            suite.harness.call('POST', '/v1/messages', {
              headers: { 'x-api-key': victim.key },
              body: { model: 'claude-sonnet-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
            }),
          )
        }
        const victimStatuses = (await Promise.all(victimCalls)).map((reply) => reply.status)
        const attackerReplies = await Promise.all(attackerCalls)
        expect(victimStatuses.filter((status) => status !== 200)).toEqual([])
        for (const reply of attackerReplies) {
          expect(reply.status).toBe(400)
          expect(reply.text).not.toContain('internal_error')
        }
        // Not one hold (nor lease) for the attacker; the victim's are closed by the books check below.
        const [open] = await queryRows<{ n: number }>(
          suite.database.db,
          sql`select count(*)::int as n from holds where key_id = ${attacker.id} or account_id = ${attacker.accountId}`,
        )
        expect(open!.n).toBe(0)
        const [attackerEntries] = await queryRows<{ n: number }>(
          suite.database.db,
          sql`select count(*)::int as n from ledger_entries where key_id = ${attacker.id}`,
        )
        expect(attackerEntries!.n).toBe(0)
        await expectBooksBalance(suite.database.db)
      }, 60_000)
    })
  }
