import { beforeAll, describe, expect, test } from 'bun:test'
import { requestActivity } from '../../src/db/activity-schema'
import { recordOf } from '../support/activity'
import { parseCsv } from '../support/csv'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

const hi = [{ role: 'user', content: 'Say hi.' }]

/**
 * The request activity endpoints (docs/operations.md#request-activity): filters, pages, exports
 * and the dashboard's stats, over records made by real requests, and, where time matters,
 * records written with the times a test needs.
 */
for (const kind of testDatabases) {
  describe(`GET /admin/v1/requests on ${kind.kind}`, () => {
    const suite = gatewaySuite(kind)
    let first: { id: string; key: string; accountId: string }
    let second: { id: string; key: string; accountId: string }
    /** Every request id this block made, by what it was. */
    const made: { ok: string[]; refused: string[]; other: string[] } = { ok: [], refused: [], other: [] }

    const call = async (credential: string, model: string, headers: Record<string, string> = {}) => {
      const reply = await suite.harness.call('POST', '/v1/chat/completions', { headers: { ...bearer(credential), ...headers }, body: { model, messages: hi } })
      return reply.headers.get('x-request-id') ?? ''
    }

    beforeAll(async () => {
      first = await suite.harness.key()
      second = await suite.harness.key()
      suite.upstream.always({ usage: { prompt_tokens: 5, completion_tokens: 5 } })
      for (let index = 0; index < 5; index++) made.ok.push(await call(first.key, 'test/cheap', { 'x-session-id': 'sess-a' }))
      made.refused.push(await call(first.key, 'no-such/model'))
      made.refused.push(await call(second.key, 'no-such/model'))
      made.other.push(await call(second.key, 'test/cheap'))
      // Every record above is written before the block's tests read them.
      await recordOf(suite.harness, made.other[0] ?? null)
    })

    const list = async (query: string) => {
      const reply = await suite.harness.admin('GET', `/requests?${query}`)
      expect(reply.status).toBe(200)
      return reply.json
    }
    const idsOf = (page: any) => page.data.map((record: any) => record.request_id)

    test('filters combine: key, account, model (asked for or served), status and its class, error code, session', async () => {
      expect(idsOf(await list(`key_id=${first.id}`))).toEqual([...made.ok, ...made.refused.slice(0, 1)].reverse())
      expect(idsOf(await list(`account_id=${second.accountId}`))).toEqual([made.refused[1], made.other[0]].reverse())
      expect(idsOf(await list(`key_id=${first.id}&model=test/cheap`))).toEqual([...made.ok].reverse())
      expect(idsOf(await list(`model=no-such/model&status=404`))).toEqual([...made.refused].reverse())
      expect(idsOf(await list(`key_id=${second.id}&status=4xx`))).toEqual([made.refused[1]])
      expect(idsOf(await list(`key_id=${second.id}&status=2xx`))).toEqual([made.other[0]])
      expect(idsOf(await list(`error_code=model_not_found&key_id=${first.id}`))).toEqual([made.refused[0]])
      expect(idsOf(await list('session_id=sess-a'))).toEqual([...made.ok].reverse())
      // Calls to the API apart from calls to the admin API (the lists above are admin calls themselves).
      const api = await list('kind=api&limit=1000')
      const admin = await list('kind=admin&limit=1000')
      expect(idsOf(api)).toEqual(expect.arrayContaining([...made.ok, ...made.refused, ...made.other]))
      expect(api.data.filter((record: any) => record.route.startsWith('/admin/'))).toEqual([])
      expect(admin.data.length).toBeGreaterThan(0)
      expect(admin.data.filter((record: any) => !record.route.startsWith('/admin/v1/'))).toEqual([])
      const until = (await list(`key_id=${first.id}&limit=1`)).data[0].created_at
      expect(idsOf(await list(`key_id=${first.id}&since=2000-01-01&until=${until}`))).not.toContain(made.refused[0])
    })

    test('pages: every record once, newest first, while requests are made between pages', async () => {
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const page: any = await list(`key_id=${first.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        expect(page.data.length).toBeLessThanOrEqual(2)
        seen.push(...idsOf(page))
        cursor = page.next_cursor
        pages++
        await call(first.key, 'test/cheap')
        await suite.harness.services.activity.flush()
      } while (cursor !== null)
      expect(pages).toBe(3)
      expect(seen).toEqual([...made.ok, ...made.refused.slice(0, 1)].reverse())
    })

    test('csv streams the whole selection with a header of the JSON field names; jsonl one record per line', async () => {
      const csv = await suite.harness.admin('GET', `/requests?account_id=${second.accountId}&format=csv`)
      expect(csv.status).toBe(200)
      expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8')
      const [header, ...rows] = parseCsv(csv.text)
      const page = await list(`account_id=${second.accountId}`)
      expect(header).toEqual(Object.keys(page.data[0]))
      expect(rows.map((row) => row[0])).toEqual(idsOf(page))
      const served = rows.find((row) => row[0] === made.other[0]) ?? []
      const record = page.data.find((entry: any) => entry.request_id === made.other[0])
      expect(JSON.parse(served[header?.indexOf('tokens') ?? -1] ?? '')).toEqual(record.tokens)
      expect(served[header?.indexOf('cost') ?? -1]).toBe(record.cost.toFixed(6))
      const jsonl = await suite.harness.admin('GET', `/requests?account_id=${second.accountId}&format=jsonl`)
      expect(
        jsonl.text
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line)),
      ).toEqual(page.data)
    })

    test('bad queries are 400 naming the parameter', async () => {
      expectError(await suite.harness.admin('GET', '/requests?modle=test/cheap'), 400, 'invalid_request')
      expect((await suite.harness.admin('GET', '/requests?modle=test/cheap')).json.error.param).toBe('modle')
      for (const [query, param] of [
        ['status=45', 'status'],
        ['status=4x', 'status'],
        ['since=2026-02-30', 'since'],
        ['cursor=bm9wZQ', 'cursor'],
        ['format=csv&limit=5', 'limit'],
        ['limit=1001', 'limit'],
      ] as const) {
        const reply = await suite.harness.admin('GET', `/requests?${query}`)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe(param)
      }
      expectError(await suite.harness.admin('GET', '/requests/stats?group_by=month'), 400, 'invalid_request')
      expectError(await suite.harness.admin('GET', '/requests/req_unknown'), 404, 'not_found')
    })

    test('stats: requests, refused (4xx but 499), failed (5xx), p50 and p95 by hour and by day, oldest first, only periods with requests', async () => {
      const record = (at: string, status: number, durationMs: number, keyId = 'key_stats') => ({
        requestId: `req_stats_${at}_${status}_${durationMs}`,
        createdAt: new Date(at),
        method: 'POST',
        route: '/v1/chat/completions',
        status,
        keyId,
        attempts: [],
        cost: 0n,
        durationMs,
      })
      const durations = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
      await suite.database.db
        .insert(requestActivity)
        .values([
          ...durations.map((duration, index) => record(`2026-03-01T09:${String(10 + index).padStart(2, '0')}:00Z`, 200, duration)),
          record('2026-03-01T09:30:00Z', 429, 5),
          record('2026-03-01T09:31:00Z', 499, 5),
          record('2026-03-01T11:00:00Z', 502, 1000),
          record('2026-03-03T00:00:00Z', 200, 7),
          record('2026-03-01T09:00:00Z', 200, 9999, 'key_other'),
        ])
      const hourly = await suite.harness.admin('GET', '/requests/stats?group_by=hour&key_id=key_stats&since=2026-03-01&until=2026-03-02')
      expect(hourly.status).toBe(200)
      const nine = [...durations, 5, 5].sort((a, b) => a - b)
      expect(hourly.json.data).toEqual([
        { period: '2026-03-01T09:00:00Z', requests: 12, refused: 1, failed: 0, p50_ms: percentile(nine, 0.5), p95_ms: percentile(nine, 0.95) },
        { period: '2026-03-01T11:00:00Z', requests: 1, refused: 0, failed: 1, p50_ms: 1000, p95_ms: 1000 },
      ])
      const daily = await suite.harness.admin('GET', '/requests/stats?key_id=key_stats&since=2026-03-01&until=2026-03-04')
      expect(daily.json.data.map((row: any) => [row.period, row.requests, row.refused, row.failed])).toEqual([
        ['2026-03-01', 13, 1, 1],
        ['2026-03-03', 1, 0, 0],
      ])
      expect((await suite.harness.admin('GET', '/requests/stats?key_id=key_none')).json.data).toEqual([])
      const adminOnly = await suite.harness.admin('GET', '/requests/stats?kind=admin&key_id=key_stats&since=2026-03-01&until=2026-03-04')
      expect(adminOnly.json.data).toEqual([])
      const apiOnly = await suite.harness.admin('GET', '/requests/stats?kind=api&key_id=key_stats&since=2026-03-01&until=2026-03-04')
      expect(apiOnly.json.data.map((row: any) => row.requests)).toEqual([13, 1])
    })
  })
}

/** The continuous percentile Postgres's percentile_cont computes: linear between the two nearest values. */
function percentile(sorted: number[], fraction: number): number {
  const position = fraction * (sorted.length - 1)
  const below = sorted[Math.floor(position)] ?? 0
  const above = sorted[Math.ceil(position)] ?? 0
  return Math.round((below + (above - below) * (position - Math.floor(position))) * 100) / 100
}
