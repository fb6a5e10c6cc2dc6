import { beforeAll, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { expectBooksBalance } from '../support/ledger-checks'
import { billedCall, type Dimension, expectedSummary, usageFixture } from '../support/usage-fixture'

/**
 * GET /admin/v1/usage answers the sums over the ledger's charge entries, for every grouping
 * and filter, page by page and streamed, with bounds on whole hours.
 */
const DIMENSIONS: Dimension[] = ['account', 'key', 'user', 'model']
function subsets(items: Dimension[]): Dimension[][] {
  const all: Dimension[][] = [[]]
  for (const item of items) for (const subset of [...all]) all.push([...subset, item])
  return all
}

/** Calls at hours, days and months apart (UTC), through two accounts, three keys and two models. */
const SCHEDULE: [string, number, string, { prompt: number; completion: number; cached?: number }][] = [
  ['2026-10-31T22:10:00Z', 0, 'test/cheap', { prompt: 11, completion: 7 }],
  ['2026-10-31T22:50:00Z', 1, 'test/smart', { prompt: 120, completion: 9, cached: 100 }],
  ['2026-10-31T23:40:00Z', 0, 'test/cheap', { prompt: 13, completion: 5 }],
  ['2026-11-01T00:05:00Z', 2, 'test/smart', { prompt: 40, completion: 30, cached: 8 }],
  ['2026-11-01T00:06:00Z', 2, 'test/cheap', { prompt: 3, completion: 1 }],
  ['2026-11-01T00:07:00Z', 0, 'test/smart', { prompt: 50, completion: 20 }],
  ['2026-11-02T13:00:00Z', 1, 'test/cheap', { prompt: 17, completion: 2 }],
  ['2026-11-02T13:59:59Z', 1, 'test/cheap', { prompt: 19, completion: 4 }],
]

for (const kind of testDatabases) {
  describe(`GET /admin/v1/usage (${kind.kind})`, () => {
    const fixture = usageFixture(kind)
    const keys: { id: string; key: string; accountId: string }[] = []
    const usage = async (query: string) => fixture.harness.admin('GET', `/usage?${query}`)

    beforeAll(async () => {
      const first = await fixture.harness.account(100)
      const second = await fixture.harness.account(100)
      keys.push(
        await fixture.harness.key({ account_id: first.id }),
        await fixture.harness.key({ account_id: first.id }),
        await fixture.harness.key({ account_id: second.id }),
      )
      for (const [time, keyIndex, model, tokens] of SCHEDULE) {
        fixture.setClock(time)
        await billedCall(fixture, keys[keyIndex]!.key, model, tokens)
      }
      // A signed-in user pays from their allotment: a charge with a user and no account or key.
      await fixture.harness.admin('POST', '/users/credits', { iss: fixture.idp.issuer, sub: 'usage-user', amount: 5 })
      fixture.setClock('2026-11-01T00:30:00Z')
      await billedCall(fixture, await fixture.idp.token({ sub: 'usage-user' }), 'test/cheap', { prompt: 21, completion: 3 })
    }, 60_000)

    test('the rollup equals the ledger, and every grouping by hour, day or month and by any parties sums the charges', async () => {
      await expectBooksBalance(fixture.database.db)
      for (const unit of ['hour', 'day', 'month'] as const) {
        for (const dimensions of subsets(DIMENSIONS)) {
          const reply = await usage(`group_by=${[unit, ...dimensions].join(',')}&limit=1000`)
          expect(reply.status).toBe(200)
          expect(reply.json.next_cursor).toBeNull()
          expect(reply.json.data).toEqual(await expectedSummary(fixture, unit, dimensions))
        }
      }
    })

    test('periods are written per unit in UTC, newest first, amounts with six decimals', async () => {
      const hours = await usage('group_by=hour')
      expect(hours.json.data.map((row: { period: string }) => row.period)).toEqual([
        '2026-11-02T13:00:00Z',
        '2026-11-01T00:00:00Z',
        '2026-10-31T23:00:00Z',
        '2026-10-31T22:00:00Z',
      ])
      expect((await usage('group_by=day')).json.data.map((row: { period: string }) => row.period)).toEqual(['2026-11-02', '2026-11-01', '2026-10-31'])
      const months = await usage('group_by=month')
      expect(months.json.data.map((row: { period: string; requests: number }) => [row.period, row.requests])).toEqual([
        ['2026-11', 6],
        ['2026-10', 3],
      ])
      expect(months.text).toMatch(/"cost":\d+\.\d{6}[,}]/)
      expect(months.text).toMatch(/"uncollected":0\.000000/)
      expect(months.text).not.toMatch(/e-\d/)
    })

    test('a charge without an account or key is grouped under null for them, and by its user', async () => {
      const rows = (await usage('group_by=month,account,user')).json.data
      expect(rows).toContainEqual(
        expect.objectContaining({ period: '2026-11', account_id: null, user_sub: 'usage-user', requests: 1, input_tokens: 21, output_tokens: 3 }),
      )
    })

    test('filters by account, key, model and whole-hour bounds (since inclusive, until exclusive)', async () => {
      const [first, , third] = keys
      const cases: [string, Parameters<typeof expectedSummary>[3]][] = [
        [`account_id=${first!.accountId}`, { account_id: first!.accountId }],
        [`key_id=${third!.id}`, { key_id: third!.id }],
        ['model=test/smart', { model: 'test/smart' }],
        ['since=2026-10-31T23:00:00Z&until=2026-11-02T13:00:00Z', { since: '2026-10-31T23:00:00Z', until: '2026-11-02T13:00:00Z' }],
        ['since=2026-11', { since: '2026-11-01T00:00:00Z' }],
        ['until=2026-11-01', { until: '2026-11-01T00:00:00Z' }],
        ['since=2026-11-01T01:00:00%2B01:00', { since: '2026-11-01T00:00:00Z' }],
        [
          `model=test/cheap&account_id=${first!.accountId}&since=2026-10-31T23:00:00Z`,
          { model: 'test/cheap', account_id: first!.accountId, since: '2026-10-31T23:00:00Z' },
        ],
      ]
      for (const [query, filter] of cases) {
        const reply = await usage(`group_by=hour,key,model&${query}`)
        expect(reply.status).toBe(200)
        expect(reply.json.data).toEqual(await expectedSummary(fixture, 'hour', ['key', 'model'], filter))
        expect(reply.json.data.length).toBeGreaterThan(0)
      }
      expect((await usage('key_id=key_none')).json).toEqual({ object: 'list', data: [], next_cursor: null })
    })

    test('pages follow next_cursor to the same rows as one page', async () => {
      const whole = (await usage('group_by=hour,key,model&limit=1000')).json.data
      const paged: unknown[] = []
      let cursor: string | null = null
      do {
        const reply: { status: number; json: { data: unknown[]; next_cursor: string | null } } = await usage(
          `group_by=hour,key,model&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        )
        expect(reply.status).toBe(200)
        expect(reply.json.data.length).toBeLessThanOrEqual(2)
        paged.push(...reply.json.data)
        cursor = reply.json.next_cursor
      } while (cursor)
      expect(paged).toEqual(whole)
      expect(whole.length).toBeGreaterThan(4)
    })

    test('csv and jsonl stream the same rows as json', async () => {
      for (const groupBy of ['day', 'hour,account,key,user,model', 'month,model']) {
        const json = (await usage(`group_by=${groupBy}&limit=1000`)).json.data as Record<string, unknown>[]
        const jsonl = await usage(`group_by=${groupBy}&format=jsonl`)
        expect(jsonl.status).toBe(200)
        expect(jsonl.headers.get('content-type')).toContain('application/x-ndjson')
        expect(
          jsonl.text
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line)),
        ).toEqual(json)
        const csv = await usage(`group_by=${groupBy}&format=csv`)
        expect(csv.status).toBe(200)
        expect(csv.headers.get('content-type')).toContain('text/csv')
        const [header, ...lines] = csv.text.trim().split('\r\n')
        const columns = header!.split(',')
        expect(columns).toEqual(Object.keys(json[0]!))
        const expectedLines = json.map((row) =>
          columns
            .map((column) => {
              const value = row[column]
              return value === null ? '' : typeof value === 'number' && /cost|uncollected/.test(column) ? value.toFixed(6) : String(value)
            })
            .join(','),
        )
        expect(lines).toEqual(expectedLines)
      }
    })

    test('unknown parameters, groupings, unaligned bounds and foreign cursors are 400 naming the parameter', async () => {
      const refused: [string, string][] = [
        ['group_by=day&colour=red', 'colour'],
        ['group_by=week', 'group_by'],
        ['group_by=day,hour', 'group_by'],
        ['group_by=model', 'group_by'],
        ['group_by=day,model,model', 'group_by'],
        ['since=2026-11-01T00:30:00Z', 'since'],
        ['until=2026-11-01T10:00:00', 'until'],
        ['since=yesterday', 'since'],
        ['format=xml', 'format'],
        ['limit=1001', 'limit'],
        ['format=csv&limit=10', 'limit'],
        ['cursor=bm90IGEgY3Vyc29y', 'cursor'],
      ]
      for (const [query, param] of refused) {
        const reply = await usage(query)
        expect({ query, status: reply.status, code: reply.json?.error?.code, param: reply.json?.error?.param }).toEqual({
          query,
          status: 400,
          code: 'invalid_request',
          param,
        })
      }
      // A cursor of one grouping does not continue another.
      const page = await usage('group_by=hour,key&limit=1')
      expect((await usage(`group_by=day&cursor=${page.json.next_cursor}`)).json.error.param).toBe('cursor')
    })

    test('needs the admin token', async () => {
      const reply = await fixture.harness.call('GET', '/admin/v1/usage')
      expect(reply.status).toBe(401)
    })
  })
}
