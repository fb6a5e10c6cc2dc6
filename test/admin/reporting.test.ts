import { beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { accounts, type LedgerKind, ledgerEntries, wallets } from '../../src/db/schema'
import { parseCsv } from '../support/csv'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, type Reply, type TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/** Every row of a list, page by page, running `between` after each page. */
async function walk(harness: TestGateway, path: string, limit: number, between: () => Promise<unknown> = async () => {}) {
  const rows: any[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const separator = path.includes('?') ? '&' : '?'
    const page: Reply = await harness.admin('GET', `${path}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    expect(page.status).toBe(200)
    expect(page.json.data.length).toBeLessThanOrEqual(limit)
    rows.push(...page.json.data)
    cursor = page.json.next_cursor
    pages++
    await between()
  } while (cursor !== null)
  return { rows, pages }
}

/** An entry's fields as CSV writes them: text as it is, amounts with six decimals, objects as JSON, null empty. */
function asCsvCells(entry: Record<string, unknown>, fields: string[]): string[] {
  return fields.map((field) => {
    const value = entry[field]
    if (value === null) return ''
    if (field === 'amount' || field === 'uncollected') return (value as number).toFixed(6)
    return typeof value === 'string' ? value : JSON.stringify(value)
  })
}

for (const kind of testDatabases) {
  describe(`admin reporting on ${kind.kind}`, () => {
    const suite = gatewaySuite(kind, { mockUpstream: false })

    async function walletOf(accountId: string) {
      const [wallet] = await suite.database.db.select().from(wallets).where(eq(wallets.ownerId, accountId))
      if (!wallet) throw new Error('no wallet')
      return wallet.id
    }

    test('accounts: every account exactly once across pages, newest first, while accounts are created between pages', async () => {
      const before: string[] = []
      for (let index = 0; index < 7; index++) before.push((await suite.harness.account(index === 0 ? 1.5 : 0)).id)
      const added: string[] = []
      const { rows, pages } = await walk(suite.harness, '/accounts', 2, async () => added.push((await suite.harness.account()).id))
      const ids = rows.map((row) => row.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(ids.filter((id) => before.includes(id))).toEqual([...before].reverse())
      for (const id of added) expect(ids).not.toContain(id)
      expect(pages).toBeGreaterThanOrEqual(4)
      const first = rows.find((row) => row.id === before[0])
      expect(first).toMatchObject({ name: 'test account', wallet: { balance: 1.5, held: 0, available: 1.5 } })
      expect(Object.keys(first).sort()).toEqual(['created_at', 'id', 'low_balance_threshold', 'name', 'wallet'])
      // Amounts keep their six decimals in the text itself.
      const text = (await suite.harness.admin('GET', '/accounts?limit=1000')).text
      expect(text).toContain('"wallet":{"balance":1.500000,"held":0.000000,"available":1.500000}')
    })

    test('accounts created in the same microsecond are each listed once (the cursor holds the id too)', async () => {
      const createdAt = new Date('2001-02-03T04:05:06.789Z')
      const ids = ['acct_tie_a', 'acct_tie_b', 'acct_tie_c']
      await suite.database.db.insert(accounts).values(ids.map((id) => ({ id, name: 'tie', createdAt })))
      await suite.database.db.insert(wallets).values(ids.map((id) => ({ id: `wal_${id}`, kind: 'wallet' as const, ownerId: id })))
      const { rows } = await walk(suite.harness, '/accounts', 1)
      expect(rows.filter((row) => row.name === 'tie').map((row) => row.id)).toEqual([...ids].reverse())
      // Oldest of all: the last rows of the walk.
      expect(rows.slice(-3).map((row) => row.id)).toEqual([...ids].reverse())
    })

    test('limits and cursors: 1..1000, a malformed or foreign cursor is a 400 naming cursor', async () => {
      for (const limit of ['0', '1001', 'ten', '-1']) {
        const reply = await suite.harness.admin('GET', `/accounts?limit=${limit}`)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe('limit')
      }
      expect((await suite.harness.admin('GET', '/accounts?limit=1000')).status).toBe(200)
      const keysCursor = (
        await (async () => {
          await suite.harness.key()
          await suite.harness.key()
          return suite.harness.admin('GET', '/keys?limit=1')
        })()
      ).json.next_cursor
      expect(keysCursor).toBeString()
      const base64url = (text: string) => Buffer.from(text).toString('base64url')
      for (const [path, cursor] of [
        ['/accounts', 'not a cursor'],
        ['/accounts', '!!!'],
        ['/accounts', base64url('accounts:yesterday|acct_x')],
        ['/accounts', base64url('accounts:2026-01-01T00:00:00.000000Z')],
        ['/accounts', keysCursor],
        ['/users', keysCursor],
        ['/ledger', keysCursor],
        ['/ledger', base64url('ledger:-5')],
        ['/ledger', base64url('ledger:99999999999999999999')],
      ] as const) {
        const reply = await suite.harness.admin('GET', `${path}?cursor=${encodeURIComponent(cursor)}`)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe('cursor')
      }
    })

    test('/swagger documents the reporting operations with their answers, exports and errors', async () => {
      const spec = (await suite.harness.call('GET', '/swagger/json')).json
      for (const [path, method] of [
        ['/admin/v1/accounts', 'get'],
        ['/admin/v1/keys', 'get'],
        ['/admin/v1/keys/{id}', 'patch'],
        ['/admin/v1/users', 'get'],
        ['/admin/v1/ledger', 'get'],
      ] as const) {
        const operation = spec.paths[path]?.[method]
        expect(operation?.responses?.['200']?.content?.['application/json']?.schema).toBeDefined()
        expect(operation?.responses?.['400']).toBeDefined()
      }
      expect(Object.keys(spec.paths['/admin/v1/ledger'].get.responses['200'].content).sort()).toEqual(['application/json', 'application/x-ndjson', 'text/csv'])
      expect(spec.paths['/admin/v1/accounts'].get.responses['200'].content['application/json'].schema.properties.next_cursor).toBeDefined()
    })

    test('an unknown query parameter is a 400 naming it, on every admin GET', async () => {
      const { id: keyId, accountId } = await suite.harness.key()
      for (const path of [
        '/accounts?limt=5',
        `/accounts/${accountId}?limt=5`,
        '/keys?acount_id=x',
        `/keys/${keyId}?limt=5`,
        '/users?limt=5',
        '/users/allotment?iss=a&sub=b&limt=5',
        '/ledger?acount_id=x',
        '/ledger?account_id=x&limt=5',
      ]) {
        const reply = await suite.harness.admin('GET', path)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe(path.includes('acount_id') ? 'acount_id' : 'limt')
      }
    })

    test('keys: listed newest first, of one account or of all, never a secret or hash', async () => {
      const { id: accountId } = await suite.harness.account()
      const created = []
      for (let index = 0; index < 5; index++) created.push(await suite.harness.key({ account_id: accountId, name: `k${index}`, monthly_quota: 0.000008 }))
      await suite.harness.key()
      const { rows } = await walk(suite.harness, `/keys?account_id=${accountId}`, 2, () => suite.harness.key({ account_id: accountId }))
      expect(rows.map((row) => row.id)).toEqual(created.map((key) => key.id).reverse())
      expect(rows[0]).toMatchObject({ object: 'api_key', account_id: accountId, name: 'k4', monthly_quota: 0.000008, allotment: null })
      const all = await walk(suite.harness, '/keys', 1000)
      expect(all.rows.length).toBeGreaterThan(rows.length)
      const text = (await suite.harness.admin('GET', `/keys?account_id=${accountId}`)).text
      for (const key of created) expect(text).not.toContain(key.key.slice(16))
      expect(text).not.toMatch(/secret|hash/)
      expect(text).toContain('"monthly_quota":0.000008')
      expect((await suite.harness.admin('GET', '/keys?account_id=acct_nobody')).json).toEqual({ object: 'list', data: [], next_cursor: null })
    })

    test('users: listed with their allotments, newest first, a page at a time', async () => {
      for (const sub of ['u-1', 'u-2', 'u-3']) {
        await suite.harness.admin('POST', '/users/credits', { iss: 'https://idp.example', sub, amount: 0.25 })
      }
      const { rows } = await walk(suite.harness, '/users', 2)
      expect(rows.slice(0, 3).map((row) => row.sub)).toEqual(['u-3', 'u-2', 'u-1'])
      expect(rows[0]).toMatchObject({ iss: 'https://idp.example', sub: 'u-3', allotment: { balance: 0.25, held: 0, available: 0.25 } })
      expect((await suite.harness.admin('GET', '/users')).text).toContain('"balance":0.250000')
    })

    test('PATCH a key: each field, null clears, validated like creation, unknown fields refused', async () => {
      const { id } = await suite.harness.key({ name: 'before', scopes: ['chat'], rpm: 5 })
      const patch = (body: unknown) => suite.harness.call('PATCH', `/admin/v1/keys/${id}`, { headers: bearer('test-admin-token-0123456789'), body })
      const changed = await patch({
        name: 'after',
        scopes: ['chat', 'wallet'],
        allowed_models: ['anthropic/*'],
        monthly_quota: 2.5,
        rpm: 30,
        tpm: 1000,
        expires_at: '2099-06-01T00:00:00Z',
      })
      expect(changed.status).toBe(200)
      expect(changed.json).toMatchObject({
        id,
        name: 'after',
        scopes: ['chat', 'wallet'],
        allowed_models: ['anthropic/*'],
        monthly_quota: 2.5,
        rpm: 30,
        tpm: 1000,
        expires_at: '2099-06-01T00:00:00.000Z',
      })
      expect(changed.text).toContain('"monthly_quota":2.500000')
      expect((await suite.harness.admin('GET', `/keys/${id}`)).json).toEqual(changed.json)
      // Only what is sent changes.
      expect((await patch({ rpm: 31 })).json).toMatchObject({ name: 'after', rpm: 31, tpm: 1000 })
      expect((await patch({})).json).toMatchObject({ name: 'after', rpm: 31 })
      const cleared = await patch({ name: null, scopes: null, allowed_models: null, monthly_quota: null, rpm: null, tpm: null, expires_at: null })
      expect(cleared.json).toMatchObject({ name: null, scopes: null, allowed_models: null, monthly_quota: null, rpm: null, tpm: null, expires_at: null })

      for (const [body, param] of [
        [{ rpm: 0 }, 'rpm'],
        [{ tpm: 1.5 }, 'tpm'],
        [{ scopes: ['chat', 'root'] }, 'scopes'],
        [{ allowed_models: ['gpt-5'] }, 'allowed_models'],
        [{ monthly_quota: 0.0000001 }, 'monthly_quota'],
        [{ monthly_quota: -1 }, 'monthly_quota'],
        [{ expires_at: 'soon' }, 'expires_at'],
        [{ expires_at: '2099-13-45T00:00' }, 'expires_at'],
        [{ secret_hash: 'x' }, 'secret_hash'],
        [{ account_id: 'acct_other' }, 'account_id'],
      ] as const) {
        const reply = await patch(body)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe(param)
      }
      expectError(
        await suite.harness.call('PATCH', '/admin/v1/keys/key_missing', { headers: bearer('test-admin-token-0123456789'), body: { rpm: 1 } }),
        404,
        'not_found',
      )
    })

    test('PATCH takes effect on the next request here, and within 5 s on another instance', async () => {
      let clock = Date.now()
      const here = suite.instance({ now: () => clock })
      const there = suite.instance({ now: () => clock })
      const { id, key } = await here.key()
      const models = (gateway: TestGateway, model = 'openai/gpt-5-mini') => gateway.call('GET', `/v1/models/${model}`, { headers: bearer(key) })
      const patch = (body: object) => here.call('PATCH', `/admin/v1/keys/${id}`, { headers: bearer('test-admin-token-0123456789'), body })
      for (let index = 0; index < 3; index++) {
        expect((await models(here)).status).toBe(200)
        expect((await models(there)).status).toBe(200)
      }

      expect((await patch({ allowed_models: ['anthropic/*'] })).status).toBe(200)
      expectError(await models(here), 404, 'model_not_found')
      // The other instance looked the key up less than 5 s ago; it learns of the edit when that lookup ages out.
      expect((await models(there)).status).toBe(200)
      clock += 5001
      expectError(await models(there), 404, 'model_not_found')
      expect((await models(here, 'anthropic/claude-sonnet-4-5')).status).toBe(200)

      // Requests per minute: this minute has already counted requests of the key.
      clock = Math.ceil(clock / 60_000) * 60_000 + 1000
      expect((await patch({ rpm: 2, allowed_models: null })).status).toBe(200)
      expect((await models(here)).status).toBe(200)
      expect((await models(here)).status).toBe(200)
      expectError(await models(here), 429, 'rate_limit_exceeded')
      expect((await patch({ rpm: null })).status).toBe(200)
      expect((await models(here)).status).toBe(200)

      // Scopes and expiry.
      expect((await here.call('GET', '/v1/wallet', { headers: bearer(key) })).status).toBe(200)
      await patch({ scopes: ['chat'] })
      expect((await here.call('GET', '/v1/wallet', { headers: bearer(key) })).status).toBe(403)
      await patch({ expires_at: new Date(clock - 1000).toISOString() })
      expectError(await models(here), 401, 'invalid_api_key')
      await patch({ expires_at: null })
      expect((await models(here)).status).toBe(200)
    })

    describe('ledger', () => {
      let accountId: string
      let walletId: string
      const base = Date.parse('2030-05-01T00:00:00Z')
      const ENTRIES = 2500

      beforeAll(async () => {
        accountId = (await suite.harness.account()).id
        walletId = await walletOf(accountId)
        const kinds: LedgerKind[] = ['charge', 'topup', 'adjustment']
        // Inserted as settlement would write them: one a minute, the newest with the largest id.
        const rows = Array.from({ length: ENTRIES }, (_, index) => ({
          kind: kinds[index % 3] as LedgerKind,
          amount: index % 3 === 2 ? -8n : BigInt(index * 7 + 8),
          walletId,
          payerType: 'wallet' as const,
          accountId,
          model: index % 2 === 0 ? 'openai/gpt-5-mini' : 'anthropic/claude-sonnet-4-5',
          requestId: `req_${index}`,
          uncollected: index % 10 === 0 ? 3n : 0n,
          usage: index % 3 === 0 ? { input_tokens: index, output_tokens: 2 } : null,
          note: index % 100 === 1 ? 'a "quoted", comma\nand a line' : null,
          createdAt: new Date(base + index * 60_000),
        }))
        for (let start = 0; start < rows.length; start += 500) await suite.database.db.insert(ledgerEntries).values(rows.slice(start, start + 500))
      })

      test('pages walk every entry once, newest first, with entries added between pages', async () => {
        let added = 0
        const { rows, pages } = await walk(suite.harness, `/ledger?account_id=${accountId}`, 1000, async () => {
          await suite.harness.admin('POST', `/accounts/${accountId}/credits`, { amount: 1 })
          added++
        })
        expect(pages).toBe(3)
        // The top-ups made during the walk are newer than its first page: none appears.
        expect(rows.filter((row) => row.kind === 'topup' && row.request_id === null)).toEqual([])
        expect(rows).toHaveLength(ENTRIES)
        expect(rows.map((row) => row.request_id)).toEqual(Array.from({ length: ENTRIES }, (_, index) => `req_${ENTRIES - 1 - index}`))
        const ids = rows.map((row) => BigInt(row.id))
        expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)))
        expect(added).toBe(3)
      })

      test('filters: model, kind, request, and since inclusive / until exclusive', async () => {
        const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString()
        const list = async (query: string) => (await suite.harness.admin('GET', `/ledger?account_id=${accountId}&limit=1000&${query}`)).json.data
        const ranged = await list(`since=${at(10)}&until=${at(20)}`)
        expect(ranged.map((row: { request_id: string }) => row.request_id)).toEqual(Array.from({ length: 10 }, (_, index) => `req_${19 - index}`))
        const withOffset = await list(`since=${encodeURIComponent('2030-05-01T02:10:00+02:00')}&until=${encodeURIComponent('2030-05-01T02:12:00+02:00')}`)
        expect(withOffset.map((row: { request_id: string }) => row.request_id)).toEqual(['req_11', 'req_10'])
        // A date alone is midnight UTC; entries run from 2030-05-01 00:00 a minute apart.
        expect((await walk(suite.harness, `/ledger?account_id=${accountId}&since=2030-05-02&until=2030-05-03`, 1000)).rows).toHaveLength(ENTRIES - 1440)
        expect(await list('since=2030-04-30&until=2030-05-01')).toEqual([])
        const charges = await list(`kind=charge&model=openai%2Fgpt-5-mini&since=${at(0)}&until=${at(12)}`)
        expect(charges.map((row: { request_id: string }) => row.request_id)).toEqual(['req_6', 'req_0'])
        expect(charges[1]).toMatchObject({ kind: 'charge', model: 'openai/gpt-5-mini', amount: 0.000008, uncollected: 0.000003, usage: { input_tokens: 0 } })
        expect(await list('request_id=req_42')).toHaveLength(1)
        const raw = (await suite.harness.admin('GET', `/ledger?account_id=${accountId}&request_id=req_0`)).text
        expect(raw).toContain('"amount":0.000008')
        expect(raw).toContain('"uncollected":0.000003')
        expect(raw).not.toMatch(/e-0\d/)
        for (const [query, param] of [
          ['kind=refund', 'kind'],
          ['since=yesterday', 'since'],
          ['since=2030-05-01T10:00', 'since'],
          ['until=2030-02-30T00:00:00Z', 'until'],
          ['until=2030-02-28T24:00:00Z', 'until'],
          ['since=2030-04-31', 'since'],
          ['format=xml', 'format'],
          ['format=csv&limit=5', 'limit'],
        ]) {
          const reply = await suite.harness.admin('GET', `/ledger?${query}`)
          expectError(reply, 400, 'invalid_request')
          expect(reply.json.error.param).toBe(param)
        }
      })

      test('CSV and JSON Lines stream the whole selection, equal to the JSON pages', async () => {
        const { rows } = await walk(suite.harness, `/ledger?account_id=${accountId}&since=2030-01-01&until=2031-01-01`, 1000)
        expect(rows).toHaveLength(ENTRIES)

        const jsonl = await suite.harness.admin('GET', `/ledger?account_id=${accountId}&since=2030-01-01&until=2031-01-01&format=jsonl`)
        expect(jsonl.status).toBe(200)
        expect(jsonl.headers.get('content-type')).toStartWith('application/x-ndjson')
        const lines = jsonl.text.split('\n')
        expect(lines.pop()).toBe('')
        expect(lines).toHaveLength(ENTRIES)
        expect(lines.map((line) => JSON.parse(line))).toEqual(rows)
        expect(lines.at(-1)).toContain('"amount":0.000008')

        const csv = await suite.harness.admin('GET', `/ledger?account_id=${accountId}&since=2030-01-01&until=2031-01-01&format=csv`)
        expect(csv.status).toBe(200)
        expect(csv.headers.get('content-type')).toStartWith('text/csv')
        expect(csv.headers.get('content-disposition')).toBe('attachment; filename="ledger.csv"')
        const [header, ...records] = parseCsv(csv.text)
        expect(header).toEqual(Object.keys(rows[0]))
        expect(records).toHaveLength(ENTRIES)
        expect(records).toEqual(rows.map((row) => asCsvCells(row, header ?? [])))
        expect(records.at(-1)?.[3]).toBe('0.000008')
        expect(csv.text).toContain(',"a ""quoted"", comma\nand a line"\r\n')

        // A cursor starts an export after that position; an empty selection is the header alone.
        const cursor = (await suite.harness.admin('GET', `/ledger?account_id=${accountId}&since=2030-01-01&limit=1000`)).json.next_cursor
        const rest = await suite.harness.admin('GET', `/ledger?account_id=${accountId}&since=2030-01-01&format=jsonl&cursor=${cursor}`)
        expect(
          rest.text
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line)),
        ).toEqual(rows.slice(1000))
        expect((await suite.harness.admin('GET', '/ledger?account_id=acct_nobody&format=csv')).text).toBe(`${header?.join(',')}\r\n`)
        expect((await suite.harness.admin('GET', '/ledger?account_id=acct_nobody&format=jsonl')).text).toBe('')
      })
    })
  })
}
