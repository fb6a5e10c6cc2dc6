import { beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases } from '../support/databases'
import { bearer, type Reply } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectRollupMatchesLedger } from '../support/ledger-checks'
import { mockCatalog } from '../support/mock-catalog'
import type { MockUpstream } from '../upstream/mock-upstream'

/**
 * Each provider's usage shape, as its API reports it, priced to the exact micro-credit on the
 * ledger (docs/billing.md#prompt-caching). Expected charges are worked out by hand from the
 * catalogue's prices, in micro-credits per token: a price of P credits per million tokens is P
 * micro-credits per token.
 */

const hi = [{ role: 'user', content: 'Say hi.' }]

/** Claude with every cache price: input 3, output 15, cache read 0.3, five-minute write 3.75, one-hour write 6. */
const CACHED_CLAUDE = {
  id: 'anthropic/claude-cache',
  type: 'chat',
  routes: [{ provider: 'native', model: 'claude-cache-a' }],
  pricing: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 },
  maxOutputTokens: 1000,
}

function catalogEnv(upstream: MockUpstream): Record<string, string> {
  const catalog = mockCatalog(upstream.baseUrl, upstream.baseUrl)
  const path = join(mkdtempSync(join(tmpdir(), 'tollgate-cache-pricing-')), 'tollgate.json')
  writeFileSync(path, JSON.stringify({ ...catalog, models: [...catalog.models, CACHED_CLAUDE] }))
  return { TOLLGATE_CONFIG: path }
}

/** 100 plain input, 20 output, 1000 cache reads, 200 five-minute and 400 one-hour cache writes. */
const SPLIT_USAGE = { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 1000, cache_write_tokens: 200, cache_write_1h_tokens: 400 }
/** 100*3 + 20*15 + 1000*0.3 + 200*3.75 + 400*6 = 300 + 300 + 300 + 750 + 2400. */
const SPLIT_CHARGE = 4050

for (const database of testDatabases) {
  describe(`cache pricing, golden usage per provider (${database.kind})`, () => {
    const suite = gatewaySuite(database, { env: ({ upstream }) => catalogEnv(upstream) })
    const upstream = suite.upstream
    beforeEach(() => upstream.reset())

    /** The call's charge entry on the ledger: its amount in micro-credits and its usage record. */
    async function chargeOf(reply: Reply): Promise<{ micros: number; usage: Record<string, unknown> }> {
      const requestId = reply.headers.get('x-request-id')
      const entries = (await suite.harness.admin('GET', `/ledger?request_id=${requestId}&kind=charge`)).json.data
      expect(entries).toHaveLength(1)
      return { micros: Math.round(entries[0].amount * 1e6), usage: entries[0].usage }
    }

    const messages = (key: string, body: object) =>
      suite.harness.call('POST', '/v1/messages', { headers: { 'x-api-key': key }, body: { model: 'claude-cache', max_tokens: 1000, messages: hi, ...body } })

    test('Anthropic native: five-minute and one-hour writes at their own prices, in the answer, the header and the ledger', async () => {
      const { key } = await suite.harness.key()
      upstream.script({ usage: SPLIT_USAGE })
      const reply = await messages(key, {})
      expect(reply.status).toBe(200)
      expect(reply.json.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 1000, cache_creation_input_tokens: 600, cost: SPLIT_CHARGE / 1e6 })
      expect(reply.headers.get('x-tollgate-cost')).toBe(String(SPLIT_CHARGE / 1e6))
      expect(await chargeOf(reply)).toEqual({
        micros: SPLIT_CHARGE,
        usage: {
          input_tokens: 100,
          output_tokens: 20,
          cache_read_tokens: 1000,
          cache_write_tokens: 200,
          cache_write_1h_tokens: 400,
          web_search_requests: 0,
          source: 'provider',
        },
      })
    })

    test('Anthropic native, streamed: the same split from message_start and message_delta', async () => {
      const { key } = await suite.harness.key()
      upstream.script({ usage: SPLIT_USAGE })
      const reply = await messages(key, { stream: true })
      expect(reply.status).toBe(200)
      expect(reply.headers.get('x-tollgate-cost')).toBeNull()
      expect((await chargeOf(reply)).micros).toBe(SPLIT_CHARGE)
    })

    test('Anthropic native without cache_creation: every write is a five-minute one', async () => {
      const { key } = await suite.harness.key()
      upstream.script({ usage: { ...SPLIT_USAGE, cache_split: false } })
      const reply = await messages(key, {})
      // 100*3 + 20*15 + 1000*0.3 + 600*3.75 = 300 + 300 + 300 + 2250.
      const charge = await chargeOf(reply)
      expect(charge.micros).toBe(3150)
      expect(charge.usage).toMatchObject({ cache_write_tokens: 600, cache_write_1h_tokens: 0 })
    })

    test('a model without cacheWrite1h prices reported one-hour writes as five-minute ones', async () => {
      const { key } = await suite.harness.key()
      upstream.script({ usage: SPLIT_USAGE })
      const reply = await suite.harness.call('POST', '/v1/messages', {
        headers: { 'x-api-key': key },
        body: { model: 'claude-test', max_tokens: 1000, messages: hi },
      })
      // claude-test: input 3, output 15, cacheRead 0.3, cacheWrite 3.75; 300 + 300 + 300 + 600*3.75.
      expect((await chargeOf(reply)).micros).toBe(3150)
    })

    test('Anthropic translated (chat completions served by a messages route): the same charge; prompt_tokens counts every input', async () => {
      const { key } = await suite.harness.key()
      upstream.script({ usage: SPLIT_USAGE })
      const reply = await suite.harness.call('POST', '/v1/chat/completions', {
        headers: bearer(key),
        body: { model: 'anthropic/claude-cache', messages: hi },
      })
      expect(reply.status).toBe(200)
      expect(upstream.received[0]?.path).toBe('/v1/messages')
      expect(reply.json.usage).toMatchObject({ prompt_tokens: 1700, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 1000 } })
      expect(reply.json.usage.cost).toBe(SPLIT_CHARGE / 1e6)
      expect(reply.headers.get('x-tollgate-cost')).toBe(String(SPLIT_CHARGE / 1e6))
      expect((await chargeOf(reply)).micros).toBe(SPLIT_CHARGE)
    })

    test('OpenAI chat completions: cached_tokens inside prompt_tokens at cacheRead', async () => {
      const { key } = await suite.harness.key()
      upstream.script({ usage: { prompt_tokens: 1000, completion_tokens: 20, cached_tokens: 400 } })
      const reply = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/smart', messages: hi } })
      // test/smart: input 3, output 15, cacheRead 0.3; 600*3 + 400*0.3 + 20*15 = 1800 + 120 + 300.
      const charge = await chargeOf(reply)
      expect(charge.micros).toBe(2220)
      expect(charge.usage).toMatchObject({ input_tokens: 600, cache_read_tokens: 400, cache_write_tokens: 0, cache_write_1h_tokens: 0 })
      expect(reply.headers.get('x-tollgate-cost')).toBe(String(reply.json.usage.cost))
    })

    test('OpenAI Responses API: cached_tokens inside input_tokens at cacheRead', async () => {
      const { key } = await suite.harness.key()
      upstream.script({ usage: { prompt_tokens: 1000, completion_tokens: 20, cached_tokens: 400 } })
      const reply = await suite.harness.call('POST', '/v1/responses', { headers: bearer(key), body: { model: 'test/smart', input: 'Say hi.' } })
      expect(upstream.received[0]?.path).toBe('/v1/responses')
      expect((await chargeOf(reply)).micros).toBe(2220)
      expect(reply.json.usage).toMatchObject({ input_tokens: 1000, input_tokens_details: { cached_tokens: 400 } })
    })

    test('Gemini: cachedContentTokenCount inside promptTokenCount at cacheRead, counted once', async () => {
      const { key } = await suite.harness.key()
      upstream.script({ usage: { prompt_tokens: 1000, completion_tokens: 20, cached_tokens: 400 } })
      const reply = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'google/gemini-test', messages: hi } })
      // google/gemini-test: input 0.3, output 2.5, cacheRead 0.03; 600*0.3 + 400*0.03 + 20*2.5 = 180 + 12 + 50.
      const charge = await chargeOf(reply)
      expect(charge.micros).toBe(242)
      expect(charge.usage).toMatchObject({ input_tokens: 600, cache_read_tokens: 400 })
    })

    test('usage summaries add cache_write_1h_tokens, equal to the ledger', async () => {
      const { id, key } = await suite.harness.key()
      upstream.script({ usage: SPLIT_USAGE }, { usage: SPLIT_USAGE })
      for (let call = 0; call < 2; call++) expect((await messages(key, {})).status).toBe(200)
      const rows = (await suite.harness.admin('GET', `/usage?group_by=day,key&key_id=${id}`)).json.data
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ requests: 2, cache_write_tokens: 400, cache_write_1h_tokens: 800, cost: (2 * SPLIT_CHARGE) / 1e6 })
      await expectRollupMatchesLedger(suite.database.db)
    })

    test('the hold covers the dearest input price: one-hour writes when the model prices them', async () => {
      const { key, accountId } = await suite.harness.key()
      // Exact holds are not visible with credit leases; a call in flight shows its hold. Instead:
      // a wallet that covers the worst case at the five-minute price but not at the one-hour one is refused.
      const estimate = (
        await suite.harness.call('POST', '/v1/messages/count_tokens', { headers: { 'x-api-key': key }, body: { model: 'claude-cache', messages: hi } })
      ).json.input_tokens as number
      // Worst case with max_tokens 1: estimate*6 + 1*15 micro-credits; give the account just less.
      const worstCase = estimate * 6 + 15
      const wallet = (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      await suite.harness.admin('POST', `/accounts/${accountId}/credits`, { amount: -(wallet.balance * 1e6 - (worstCase - 1)) / 1e6 })
      const refused = await messages(key, { max_tokens: 1 })
      expect(refused.status).toBe(402)
      await suite.harness.admin('POST', `/accounts/${accountId}/credits`, { amount: 1 / 1e6 })
      upstream.script({ usage: { prompt_tokens: 1, completion_tokens: 1 } })
      expect((await messages(key, { max_tokens: 1 })).status).toBe(200)
    })
  })
}
