import { beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { queryRows } from '../../src/db/rows'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { billedCall, expectedSummary, usageFixture } from '../support/usage-fixture'

/**
 * GET /v1/usage: the calling key's own usage this month by day and model (days without usage
 * left out) and its latest billed requests, for API keys in Authorization: Bearer only.
 */
for (const kind of testDatabases) {
  describe(`GET /v1/usage (${kind.kind})`, () => {
    const fixture = usageFixture(kind)
    let mine: { id: string; key: string; accountId: string }
    let sibling: { id: string; key: string; accountId: string }
    const usageOf = (key: string) => fixture.harness.call('GET', '/v1/usage', { headers: bearer(key) })

    beforeAll(async () => {
      mine = await fixture.harness.key()
      sibling = await fixture.harness.key({ account_id: mine.accountId })
      const calls: [string, string, string, number][] = [
        ['2026-10-30T10:00:00Z', mine.key, 'test/cheap', 5],
        ['2026-11-01T00:00:00Z', mine.key, 'test/cheap', 7],
        ['2026-11-01T23:59:00Z', mine.key, 'test/smart', 9],
        ['2026-11-03T08:00:00Z', mine.key, 'test/cheap', 11],
        ['2026-11-03T09:00:00Z', mine.key, 'test/cheap', 13],
        ['2026-11-03T09:00:00Z', sibling.key, 'test/cheap', 1000],
      ]
      for (const [time, key, model, prompt] of calls) {
        fixture.setClock(time)
        await billedCall(fixture, key, model, { prompt, completion: 2 })
      }
      fixture.setClock('2026-11-15T12:00:00Z')
    }, 60_000)

    test("this month's days by model, the key's own only, days without usage left out", async () => {
      const reply = await usageOf(mine.key)
      expect(reply.status).toBe(200)
      expect(reply.json.object).toBe('usage')
      const expected = (await expectedSummary(fixture, 'day', ['model'], { key_id: mine.id, since: '2026-11-01T00:00:00Z' })).map((row) => ({
        period: row.period,
        model: row.model,
        requests: row.requests,
        input_tokens: row.input_tokens,
        output_tokens: row.output_tokens,
        cost: row.cost,
      }))
      expect(reply.json.data).toEqual(expected)
      expect(reply.json.data.map((row: { period: string; model: string }) => `${row.period} ${row.model}`)).toEqual([
        '2026-11-03 test/cheap',
        '2026-11-01 test/smart',
        '2026-11-01 test/cheap',
      ])
      expect(reply.json.data[0].input_tokens).toBe(24)
      expect(reply.text).not.toMatch(/e-\d/)
    })

    test('recent lists the key’s charges from the ledger, newest first, last month included', async () => {
      const reply = await usageOf(mine.key)
      const charges = await queryRows<{ request_id: string; amount: string }>(
        fixture.database.db,
        sql`select request_id, amount::text as amount from ledger_entries where kind = 'charge' and key_id = ${mine.id} order by id desc`,
      )
      expect(reply.json.recent.map((entry: { request_id: string }) => entry.request_id)).toEqual(charges.map((charge) => charge.request_id))
      expect(reply.json.recent.map((entry: { cost: number }) => entry.cost)).toEqual(charges.map((charge) => Number(charge.amount) / 1e6))
      expect(reply.json.recent.map((entry: { input_tokens: number }) => entry.input_tokens)).toEqual([13, 11, 9, 7, 5])
      expect(reply.json.recent[0]).toMatchObject({ created_at: '2026-11-03T09:00:00.000Z', model: 'test/cheap', output_tokens: 2 })
      const siblings = (await usageOf(sibling.key)).json
      expect(siblings.recent).toHaveLength(1)
      expect(siblings.data).toMatchObject([{ period: '2026-11-03', model: 'test/cheap', requests: 1, input_tokens: 1000 }])
    })

    test('recent stops at 100 requests; a new month starts with no days', async () => {
      const busy = await fixture.harness.key()
      for (let batch = 0; batch < 6; batch++) {
        const replies = await Promise.all(
          Array.from({ length: 20 }, () =>
            fixture.harness.call('POST', '/v1/chat/completions', {
              headers: bearer(busy.key),
              body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
            }),
          ),
        )
        expect(replies.every((reply) => reply.status === 200)).toBe(true)
      }
      const reply = await usageOf(busy.key)
      expect(reply.json.recent).toHaveLength(100)
      expect(reply.json.data).toMatchObject([{ period: '2026-11-15', model: 'test/cheap', requests: 120 }])
      fixture.setClock('2026-12-01T00:00:00Z')
      const december = await usageOf(busy.key)
      expect(december.json.data).toEqual([])
      expect(december.json.recent).toHaveLength(100)
      fixture.setClock('2026-11-15T12:00:00Z')
    }, 60_000)

    test('a user token, x-api-key, no credential and a key without the wallet scope are refused', async () => {
      expectError(await fixture.harness.call('GET', '/v1/usage', { headers: bearer(await fixture.idp.token()) }), 401, 'invalid_api_key')
      expectError(await fixture.harness.call('GET', '/v1/usage', { headers: { 'x-api-key': mine.key } }), 401, 'invalid_api_key')
      expectError(await fixture.harness.call('GET', '/v1/usage'), 401, 'invalid_api_key')
      const chatOnly = await fixture.harness.key({ scopes: ['chat'] })
      expect((await usageOf(chatOnly.key)).status).toBe(403)
    })

    test('documented in the API document with its answer, errors and security', async () => {
      const document = (await fixture.harness.call('GET', '/swagger/json')).json
      const operation = document.paths['/v1/usage'].get
      expect(operation.responses['200'].content['application/json'].schema.properties.recent).toBeDefined()
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '429', '500', '503']))
      expect(operation.security?.length ?? document.security?.length).toBeGreaterThan(0)
      expect(document.paths['/admin/v1/usage'].get.responses['200']).toBeDefined()
    })
  })
}
