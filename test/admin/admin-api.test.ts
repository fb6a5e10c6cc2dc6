import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { hashApiKey } from '../../src/auth/api-key-secret'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { ADMIN_TOKEN } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

for (const kind of testDatabases) {
  describe(`admin API on ${kind.kind}`, () => {
    const suite = gatewaySuite(kind, { mockUpstream: false })

    test('answers 404 everywhere when TOLLGATE_ADMIN_TOKEN is unset, and 401 to a wrong token', async () => {
      const closed = suite.instance({ env: { TOLLGATE_ADMIN_TOKEN: undefined } })
      for (const [method, path] of [
        ['POST', '/admin/v1/accounts'],
        ['GET', '/admin/v1/ledger'],
        ['GET', '/admin/v1/keys/x'],
      ] as const) {
        expectError(
          await closed.call(method, path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: method === 'POST' ? { name: 'x' } : undefined }),
          404,
          'not_found',
        )
      }
      expectError(
        await suite.harness.call('POST', '/admin/v1/accounts', { headers: { authorization: 'Bearer wrong' }, body: { name: 'x' } }),
        401,
        'invalid_api_key',
      )
      expectError(await suite.harness.call('POST', '/admin/v1/accounts', { body: { name: 'x' } }), 401, 'invalid_api_key')
    })

    test('without TOLLGATE_ADMIN_TOKEN the admin API is undiscoverable: 404 to every method, nothing in /swagger', async () => {
      const closed = suite.instance({ env: { TOLLGATE_ADMIN_TOKEN: undefined } })
      const paths = [
        '/admin/v1/accounts',
        '/admin/v1/accounts/acct_x',
        '/admin/v1/keys',
        '/admin/v1/keys/key_x/revoke',
        '/admin/v1/ledger',
        '/admin/v1/users/allotment',
        '/admin/v1/nothing',
      ]
      for (const path of paths) {
        for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']) {
          for (const headers of [{}, { authorization: `Bearer ${ADMIN_TOKEN}` }] as Record<string, string>[]) {
            const reply = await closed.call(method, path, { headers })
            if (method === 'HEAD') expect(reply.status).toBe(404)
            else {
              expectError(reply, 404, 'not_found')
              expect(reply.headers.get('allow')).toBeNull()
              expect(reply.text).not.toMatch(/not allowed|GET or|POST or/)
            }
          }
        }
      }
      const spec = (await closed.call('GET', '/swagger/json')).json
      expect(Object.keys(spec.paths).filter((path) => path.startsWith('/admin'))).toEqual([])
      expect(JSON.stringify(spec)).not.toMatch(/admin|TOLLGATE_ADMIN_TOKEN/i)
      expect(Object.keys(spec.paths)).toContain('/v1/chat/completions')
    })

    test('with the token set, a wrong method on an admin path is 405 with Allow, and /swagger documents the admin API', async () => {
      const wrong = await suite.harness.call('DELETE', '/admin/v1/accounts', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
      expectError(wrong, 405, 'method_not_allowed')
      expect(wrong.headers.get('allow')).toBe('GET, POST')
      const spec = (await suite.harness.call('GET', '/swagger/json')).json
      expect(Object.keys(spec.paths)).toContain('/admin/v1/keys')
      expect(spec.components.securitySchemes.adminToken).toBeDefined()
    })

    test('accounts: create, read, validation', async () => {
      const created = await suite.harness.admin('POST', '/accounts', { name: 'Acme' })
      expect(created.status).toBe(201)
      const account = created.json
      expect(account.id).toMatch(/^acct_/)
      expect(account).toMatchObject({ name: 'Acme', wallet: { balance: 0, held: 0, available: 0 } })
      expect((await suite.harness.admin('GET', `/accounts/${account.id}`)).json).toEqual(account)
      expectError(await suite.harness.admin('GET', '/accounts/acct_missing'), 404, 'not_found')
      const invalid = await suite.harness.admin('POST', '/accounts', {})
      expectError(invalid, 400, 'invalid_request')
      expect(invalid.json.error.param).toBe('name')
    })

    test('credits: exact decimals, idempotent, adjustments never below what is held', async () => {
      const { id } = await suite.harness.account()
      const credit = (body: object) => suite.harness.admin('POST', `/accounts/${id}/credits`, body)
      expect((await credit({ amount: 10.123456, idempotency_key: 'grant-1', note: 'welcome' })).json).toEqual({
        wallet: { balance: 10.123456, held: 0, available: 10.123456 },
      })
      expect((await credit({ amount: 10.123456, idempotency_key: 'grant-1' })).json.wallet.balance).toBe(10.123456)
      expectError(await credit({ amount: 5, idempotency_key: 'grant-1' }), 409, 'idempotency_conflict')
      expect((await credit({ amount: -0.123456 })).json.wallet.balance).toBe(10)
      const tooMuch = await credit({ amount: -10.000001 })
      expectError(tooMuch, 400, 'invalid_request')
      expect(tooMuch.json.error.param).toBe('amount')
      expectError(await credit({ amount: 0.0000001 }), 400, 'invalid_request')
      expectError(await credit({ amount: 0 }), 400, 'invalid_request')
      expectError(await credit({ amount: '5' }), 400, 'invalid_request')
      expectError(await suite.harness.admin('POST', '/accounts/acct_missing/credits', { amount: 1 }), 404, 'not_found')

      const ledger = (await suite.harness.admin('GET', `/ledger?account_id=${id}`)).json.data
      expect(ledger.map((entry: { kind: string; amount: number }) => [entry.kind, entry.amount])).toEqual([
        ['adjustment', -0.123456],
        ['topup', 10.123456],
      ])
      expect(ledger[1]).toMatchObject({ payer: { type: 'wallet', id }, account_id: id, note: 'welcome', uncollected: 0 })
    })

    test('concurrent top-ups with one idempotency key apply once', async () => {
      const { id } = await suite.harness.account()
      const replies = await Promise.all(
        Array.from({ length: 8 }, () => suite.harness.admin('POST', `/accounts/${id}/credits`, { amount: 3, idempotency_key: 'same' })),
      )
      expect(replies.map((reply) => reply.status)).toEqual(Array(8).fill(200))
      expect((await suite.harness.admin('GET', `/accounts/${id}`)).json.wallet.balance).toBe(3)
      expect((await suite.harness.admin('GET', `/ledger?account_id=${id}`)).json.data).toHaveLength(1)
    })

    test('keys: the secret is shown once and never stored or echoed', async () => {
      const { id: accountId } = await suite.harness.account()
      const created = await suite.harness.admin('POST', '/keys', {
        account_id: accountId,
        env: 'dev',
        name: 'ci',
        scopes: ['chat', 'wallet'],
        allowed_models: ['openai/*', 'anthropic/claude-sonnet-4-5'],
        monthly_quota: 50.5,
        expires_at: '2099-01-01T00:00:00Z',
        rpm: 60,
        tpm: 100000,
      })
      expect(created.status).toBe(201)
      const key: string = created.json.key
      expect(key).toMatch(/^tollgate_sk_dev_[A-Za-z0-9]{32,}$/)
      const fetched = await suite.harness.admin('GET', `/keys/${created.json.id}`)
      expect(fetched.json).toEqual({ ...created.json, key: undefined } as object)
      expect(fetched.json).toMatchObject({
        account_id: accountId,
        env: 'dev',
        name: 'ci',
        hint: key.slice(-4),
        scopes: ['chat', 'wallet'],
        allowed_models: ['openai/*', 'anthropic/claude-sonnet-4-5'],
        monthly_quota: 50.5,
        allotment: null,
        rpm: 60,
        tpm: 100000,
        expires_at: '2099-01-01T00:00:00.000Z',
        revoked_at: null,
      })
      expect(fetched.text).not.toContain(key.slice(16))
      const stored = JSON.stringify(await suite.database.db.execute(sql`select * from api_keys`))
      expect(stored).toContain(hashApiKey(key))
      expect(stored).not.toContain(key.slice(16))
      expect(suite.harness.logs.join('\n')).not.toContain(key.slice(16))
    })

    test('keys: validation and unknown accounts', async () => {
      const { id: accountId } = await suite.harness.account()
      const badScope = await suite.harness.admin('POST', '/keys', { account_id: accountId, env: 'prod', scopes: ['chat', 'root'] })
      expectError(badScope, 400, 'invalid_request')
      expect(badScope.json.error.param).toBe('scopes[1]')
      const badPattern = await suite.harness.admin('POST', '/keys', { account_id: accountId, env: 'prod', allowed_models: ['gpt-5'] })
      expect(badPattern.json.error.param).toBe('allowed_models[0]')
      const badEnv = await suite.harness.admin('POST', '/keys', { account_id: accountId, env: 'staging' })
      expect(badEnv.json.error).toMatchObject({ param: 'env', message: expect.stringContaining('"prod", "dev"') })
      expectError(await suite.harness.admin('POST', '/keys', { account_id: accountId, env: 'prod', expires_at: '2099-13-45T00:00' }), 400, 'invalid_request')
      expectError(await suite.harness.admin('POST', '/keys', { account_id: 'acct_missing', env: 'prod' }), 404, 'not_found')
      expectError(await suite.harness.admin('GET', '/keys/key_missing'), 404, 'not_found')
      expectError(await suite.harness.admin('POST', '/keys/key_missing/revoke'), 404, 'not_found')
    })

    test('keys: revocation is recorded once; allotments top up idempotently', async () => {
      const { id } = await suite.harness.key({ allotment: 5 })
      const first = await suite.harness.admin('POST', `/keys/${id}/revoke`)
      expect(first.json.revoked_at).toBeString()
      expect((await suite.harness.admin('POST', `/keys/${id}/revoke`)).json.revoked_at).toBe(first.json.revoked_at)

      expect((await suite.harness.admin('GET', `/keys/${id}`)).json.allotment).toEqual({ balance: 5, held: 0, available: 5 })
      const topUp = () => suite.harness.admin('POST', `/keys/${id}/allotment`, { amount: 2.5, idempotency_key: 'k-1' })
      expect((await topUp()).json).toEqual({ balance: 7.5, held: 0, available: 7.5 })
      expect((await topUp()).json).toEqual({ balance: 7.5, held: 0, available: 7.5 })
      const entries = (await suite.harness.admin('GET', `/ledger?key_id=${id}`)).json.data
      expect(entries.map((entry: { amount: number }) => entry.amount)).toEqual([2.5, 5])
      expect(entries[0].payer).toEqual({ type: 'key_allotment', id })
    })

    test('users: credits create the user; the allotment reads back', async () => {
      const credit = () => suite.harness.admin('POST', '/users/credits', { iss: 'https://idp.example', sub: 'alice', amount: 4, idempotency_key: 'u-1' })
      expect((await credit()).json).toEqual({ balance: 4, held: 0, available: 4 })
      expect((await credit()).json).toEqual({ balance: 4, held: 0, available: 4 })
      expect((await suite.harness.admin('GET', '/users/allotment?iss=https%3A%2F%2Fidp.example&sub=alice')).json).toEqual({
        balance: 4,
        held: 0,
        available: 4,
        quotas: { day: null, week: null, month: null },
        quotas_from: null,
        spent: { day: 0, week: 0, month: 0 },
      })
      expectError(await suite.harness.admin('GET', '/users/allotment?iss=https%3A%2F%2Fidp.example&sub=bob'), 404, 'not_found')
      expectError(await suite.harness.admin('GET', '/users/allotment?sub=bob'), 400, 'invalid_request')
      const entries = (await suite.harness.admin('GET', '/ledger?user_sub=alice')).json.data
      expect(entries).toHaveLength(1)
      expect(entries[0]).toMatchObject({ kind: 'topup', payer: { type: 'user_allotment' }, user_sub: 'alice', amount: 4 })
    })

    test('custom models: created per account, names unique per account, base must be a chat model', async () => {
      const { id: accountId } = await suite.harness.account()
      const create = (body: object) => suite.harness.admin('POST', '/custom-models', { account_id: accountId, ...body })
      const created = await create({ name: 'support-bot', base_model: 'openai/gpt-5-mini', system: 'Be kind.', defaults: { temperature: 0.2 } })
      expect(created.status).toBe(201)
      expect(created.json).toMatchObject({ id: 'custom/support-bot', base_model: 'openai/gpt-5-mini', defaults: { temperature: 0.2 } })
      expectError(await create({ name: 'support-bot', base_model: 'openai/gpt-5' }), 400, 'invalid_request')
      expect((await create({ name: 'x', base_model: 'openai/text-embedding-3-small' })).json.error.param).toBe('base_model')
      expect((await create({ name: 'bad name', base_model: 'openai/gpt-5' })).json.error.param).toBe('name')
      const other = await suite.harness.account()
      expect((await suite.harness.admin('POST', '/custom-models', { account_id: other.id, name: 'support-bot', base_model: 'openai/gpt-5' })).status).toBe(201)
    })

    test('ledger: filters, newest first, limit, and balances equal top-ups minus charges', async () => {
      const { id } = await suite.harness.account()
      for (const amount of [1, 2, 3, -0.5]) await suite.harness.admin('POST', `/accounts/${id}/credits`, { amount })
      const all = (await suite.harness.admin('GET', `/ledger?account_id=${id}`)).json.data
      expect(all.map((entry: { amount: number }) => entry.amount)).toEqual([-0.5, 3, 2, 1])
      expect(Object.keys(all[0]).sort()).toEqual(
        [
          'account_id',
          'amount',
          'created_at',
          'env',
          'id',
          'key_id',
          'kind',
          'model',
          'note',
          'payer',
          'request_id',
          'route',
          'session_id',
          'uncollected',
          'usage',
          'user_sub',
        ].sort(),
      )
      expect((await suite.harness.admin('GET', `/ledger?account_id=${id}&limit=2`)).json.data).toHaveLength(2)
      expectError(await suite.harness.admin('GET', `/ledger?limit=0`), 400, 'invalid_request')
      expectError(await suite.harness.admin('GET', `/ledger?limit=many`), 400, 'invalid_request')
      const sum = all.reduce((total: number, entry: { kind: string; amount: number }) => total + (entry.kind === 'charge' ? -entry.amount : entry.amount), 0)
      expect((await suite.harness.admin('GET', `/accounts/${id}`)).json.wallet.balance).toBeCloseTo(sum, 6)
    })
  })
}
