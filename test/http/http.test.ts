import { beforeAll, describe, expect, test } from 'bun:test'
import { migrate } from '../../src/db/migrate'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, startGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

describe('HTTP behaviour shared by every route', () => {
  const suite = gatewaySuite(testDatabases[0]!, { mockUpstream: false })
  let key: { id: string; key: string }

  beforeAll(async () => {
    key = await suite.harness.key()
  })

  test('unknown routes are 404 and wrong methods 405, in the envelope of the path', async () => {
    expectError(await suite.harness.call('GET', '/v2/anything'), 404, 'not_found')
    expectError(await suite.harness.call('POST', '/v1/messages/batches'), 404, 'not_found', 'messages')
    const wrongMethod = await suite.harness.call('GET', '/v1/chat/completions')
    expectError(wrongMethod, 405, 'method_not_allowed')
    expect(wrongMethod.headers.get('allow')).toBe('POST')
    expectError(await suite.harness.call('DELETE', '/v1/messages'), 405, 'method_not_allowed', 'messages')
    expectError(await suite.harness.call('POST', '/v1/models'), 405, 'method_not_allowed')
    expectError(await suite.harness.call('PUT', '/admin/v1/keys/key_1/revoke'), 405, 'method_not_allowed')
  })

  test('a 404 names the endpoint a base URL without /v1, or with it twice, missed', async () => {
    const missing = await suite.harness.call('POST', '/chat/completions', { headers: bearer(key.key), body: {} })
    expectError(missing, 404, 'not_found')
    expect(missing.json.error.message).toBe(
      "No endpoint POST /chat/completions. The API is under one /v1: POST /v1/chat/completions (check the client's base URL).",
    )
    const doubled = await suite.harness.call('POST', '/v1/v1/messages', { headers: bearer(key.key), body: {} })
    expect(doubled.json.error.message).toEndWith("POST /v1/messages (check the client's base URL).")
    // Nothing is suggested where nothing fits: an unknown path, or a method the endpoint does not take.
    expect((await suite.harness.call('GET', '/v2/anything')).json.error.message).toBe('No endpoint GET /v2/anything.')
    expect((await suite.harness.call('DELETE', '/chat/completions')).json.error.message).toBe('No endpoint DELETE /chat/completions.')
  })

  test('an unknown model points to the model list', async () => {
    const reply = await suite.harness.call('POST', '/v1/chat/completions', {
      headers: bearer(key.key),
      body: { model: 'no/such-model', messages: [{ role: 'user', content: 'hi' }] },
    })
    expectError(reply, 404, 'model_not_found')
    expect(reply.json.error.message).toBe("The model 'no/such-model' does not exist; GET /v1/models lists the models this key can use.")
  })

  test('a body that is not JSON or not UTF-8 is 400 invalid_request, after authentication', async () => {
    expectError(await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key.key), body: '{"model": ' }), 400, 'invalid_request')
    const latin1 = new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]) // {"n":"é"} in Latin-1
    expectError(await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key.key), body: latin1 }), 400, 'invalid_request')
    expectError(await suite.harness.call('POST', '/v1/messages', { headers: { 'x-api-key': key.key }, body: 'nope' }), 400, 'invalid_request', 'messages')
    expectError(await suite.harness.admin('POST', '/accounts', latin1), 400, 'invalid_request')
    // Without credentials the caller learns nothing about the body.
    expectError(await suite.harness.call('POST', '/v1/chat/completions', { body: '{"model": ' }), 401, 'invalid_api_key')
  })

  test('JSON is read whatever the content type says (curl -d sends form encoding)', async () => {
    const reply = await suite.harness.call('POST', '/admin/v1/accounts', {
      headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'application/x-www-form-urlencoded' },
      body: '{"name":"curl user"}',
    })
    expect(reply.status).toBe(201)
    expect(reply.json.name).toBe('curl user')
  })

  test('schema violations name the field', async () => {
    const reply = await suite.harness.admin('POST', '/keys', { account_id: key.id, env: 'prod', rpm: 1.5 })
    expectError(reply, 400, 'invalid_request')
    expect(reply.json.error.param).toBe('rpm')
    expect(reply.json.error.message).toContain('rpm')
  })

  test('odd bodies never produce a 500', async () => {
    const bodies = ['null', '[]', '"text"', '42', '{"name": {"$gt": ""}}', '{"name": "x", "__proto__": {"admin": true}}', '{'.repeat(5000), '']
    for (const path of ['/admin/v1/accounts', '/admin/v1/keys', '/admin/v1/users/credits', '/admin/v1/custom-models']) {
      for (const body of bodies) {
        const reply = await suite.harness.call('POST', path, { headers: { authorization: 'Bearer test-admin-token-0123456789' }, body })
        expect(reply.status).toBeLessThan(500)
        expect(reply.text).not.toContain('    at ')
      }
    }
  })

  test('short host names route like any other (http://llm/v1/...)', async () => {
    for (const url of ['http://llm/v1/models/openai/gpt-5', 'http://x/v1/healthz', 'http://127.0.0.1:8080/v1/models/coding']) {
      const response = await suite.harness.gateway.handle(new Request(url))
      expect(response.status).toBe(200)
    }
  })

  test('every response carries its own x-request-id, HEAD / included', async () => {
    const replies = await Promise.all([
      suite.harness.call('HEAD', '/'),
      suite.harness.call('GET', '/v1/healthz'),
      suite.harness.call('GET', '/nowhere'),
      suite.harness.call('GET', '/v1/wallet'),
    ])
    expect(replies[0]!.status).toBe(200)
    const ids = replies.map((reply) => reply.headers.get('x-request-id'))
    ids.forEach((id) => expect(id).toMatch(/^req_[A-Za-z0-9]{20}$/))
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('one JSON log line per request: id, route, status, latency, key id, never a secret', async () => {
    suite.harness.logs.length = 0
    const reply = await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key.key) })
    await suite.harness.call('GET', '/v1/wallet', { headers: bearer(`${key.key}x`) })
    expect(suite.harness.logs).toHaveLength(2)
    const [ok, refused] = suite.harness.logs.map((line) => JSON.parse(line))
    expect(ok).toMatchObject({ request_id: reply.headers.get('x-request-id'), method: 'GET', route: '/v1/wallet', status: 200, key_id: key.id })
    expect(ok.latency_ms).toBeNumber()
    expect(refused).toMatchObject({ status: 401, key_id: null })
    expect(suite.harness.logs.join('\n')).not.toContain(key.key.slice(17))
  })

  test('OpenAPI docs at /swagger, generated from the route schemas', async () => {
    const page = await suite.harness.call('GET', '/swagger')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    const spec = (await suite.harness.call('GET', '/swagger/json')).json
    expect(spec.info.title).toBe('Tollgate')
    for (const path of ['/v1/models', '/v1/wallet', '/v1/pricing', '/v1/readyz', '/admin/v1/keys', '/admin/v1/accounts/{id}/credits']) {
      expect(Object.keys(spec.paths)).toContain(path)
    }
    const keyBody = spec.paths['/admin/v1/keys'].post.requestBody.content['application/json'].schema
    expect(keyBody.required).toEqual(['account_id', 'env'])
    expect(Object.keys(keyBody.properties)).toContain('allowed_models')
  })
})

describe('readiness', () => {
  test('503 until migrations are applied and while the database is gone', async () => {
    const database = await testDatabases[0]!.open({ migrated: false })
    const harness = startGateway(database)
    expect((await harness.call('GET', '/v1/healthz')).status).toBe(200)
    const pending = await harness.call('GET', '/v1/readyz')
    expect(pending.status).toBe(503)
    expect(pending.json).toEqual({ status: 'not_ready', database: 'migrations_pending' })
    await migrate(database.db)
    expect((await harness.call('GET', '/v1/readyz')).json).toEqual({ status: 'ready', database: 'ready' })
    await database.close()
    const gone = await harness.call('GET', '/v1/readyz')
    expect(gone.status).toBe(503)
    expect(gone.json.database).toBe('unreachable')
    // An unmigrated embedded database is made by initdb in the test process: seconds on a busy machine.
  }, 60_000)
})
