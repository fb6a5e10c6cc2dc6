import { describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * Values the database cannot hold (a NUL character: Postgres text and jsonb refuse it) and
 * other bad input used to reach a query and come back as 500s (issue "One request cannot stall
 * the gateway"). The rule: an id looked up (a model id, an admin path id) with a NUL names
 * nothing, 404; any other query or body field with one is a 400 naming it.
 */
for (const kind of testDatabases) {
  describe(`bad input is a 4xx, never a 500 (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)

    test("a NUL in a custom model's id: 404 model_not_found on chat completions and /v1/models/{id}", async () => {
      const { harness } = suite
      const key = await harness.key()
      expect((await harness.admin('POST', '/custom-models', { account_id: key.accountId, name: 'helper', base_model: 'test/cheap' })).status).toBe(201)
      const chat = await harness.call('POST', '/v1/chat/completions', {
        headers: bearer(key.key),
        body: { model: 'custom/helper\u0000', messages: [{ role: 'user', content: 'hi' }] },
      })
      expectError(chat, 404, 'model_not_found')
      expect(chat.json.error.param).toBe('model')
      // /v1/messages serves no custom model (400 model_not_supported) and never looks one up.
      const messages = (model: string) =>
        harness.call('POST', '/v1/messages', {
          headers: { 'x-api-key': key.key },
          body: { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
        })
      expectError(await messages('custom/helper\u0000'), 400, 'model_not_supported', 'messages')
      expectError(await messages('claude-\u0000'), 404, 'model_not_found', 'messages')
      for (const path of ['/v1/models/custom%2Fhelper%00', '/v1/models/custom/%00']) {
        expectError(await harness.call('GET', path, { headers: bearer(key.key) }), 404, 'model_not_found')
      }
      // The custom model itself is still found.
      expect((await harness.call('GET', '/v1/models/custom%2Fhelper', { headers: bearer(key.key) })).status).toBe(200)
    })

    test('a NUL in an admin query field is 400 naming it; in an admin path id, 404', async () => {
      const { harness } = suite
      const allotment = await harness.admin('GET', '/users/allotment?iss=%00&sub=someone')
      expectError(allotment, 400, 'invalid_request')
      expect(allotment.json.error.param).toBe('iss')
      const ledger = await harness.admin('GET', '/ledger?request_id=%00')
      expectError(ledger, 400, 'invalid_request')
      expect(ledger.json.error.param).toBe('request_id')
      for (const path of ['/keys/%00', '/accounts/acct_%00', '/keys/key_%00/revoke']) {
        const method = path.endsWith('revoke') ? 'POST' : 'GET'
        expectError(await harness.admin(method, path), 404, 'not_found')
      }
      // The same lookups without the NUL still work.
      expectError(await harness.admin('GET', '/users/allotment?iss=someone&sub=someone'), 404, 'not_found')
      expect((await harness.admin('GET', '/ledger?request_id=req_none')).json.data).toEqual([])
    })

    test('a NUL anywhere in an admin body, text or JSON, is 400 naming the field', async () => {
      const { harness } = suite
      const { id } = await harness.account()
      const cases: [string, string, object, string][] = [
        ['POST', '/accounts', { name: 'Acme\u0000' }, 'name'],
        ['POST', `/accounts/${id}/credits`, { amount: 1, idempotency_key: 'grant\u0000' }, 'idempotency_key'],
        ['POST', `/accounts/${id}/credits`, { amount: 1, note: '\u0000' }, 'note'],
        ['POST', '/users/credits', { iss: 'https://issuer\u0000', sub: 'someone', amount: 1 }, 'iss'],
        ['POST', '/keys', { account_id: id, env: 'prod', name: 'k\u0000' }, 'name'],
        ['POST', '/custom-models', { account_id: id, name: 'nul', base_model: 'test/cheap', defaults: { stop: ['ok', 'no\u0000'] } }, 'defaults.stop[1]'],
        ['POST', '/custom-models', { account_id: id, name: 'nul', base_model: 'test/cheap', defaults: { 'key\u0000': 1 } }, 'defaults.key\u0000'],
      ]
      for (const [method, path, body, param] of cases) {
        const reply = await harness.admin(method, path, body)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe(param)
      }
    })

    test('an unpaired surrogate in an admin body (jsonb refuses it) is 400 naming the field', async () => {
      const { harness } = suite
      const { id } = await harness.account()
      const cases: [string, string, object, string][] = [
        ['POST', '/custom-models', { account_id: id, name: 'lone', base_model: 'test/cheap', defaults: { temperature: '\ud83d' } }, 'defaults.temperature'],
        ['POST', '/custom-models', { account_id: id, name: 'lone', base_model: 'test/cheap', system: 'low \udc00 alone' }, 'system'],
        ['POST', '/users/credits', { iss: 'https://issuer.example', sub: 'x\ud83d', amount: 1 }, 'sub'],
      ]
      for (const [method, path, body, param] of cases) {
        const reply = await harness.admin(method, path, body)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe(param)
      }
      // A surrogate pair is a character like any other.
      const paired = await harness.admin('POST', '/custom-models', { account_id: id, name: 'paired', base_model: 'test/cheap', system: 'smile \ud83d\ude00' })
      expect(paired.status).toBe(201)
    })

    test('an identity longer than OpenID Connect allows is a 400 naming it, never an index overflow', async () => {
      const { harness } = suite
      for (const [body, param] of [
        [{ iss: 'https://issuer.example', sub: 'a'.repeat(100_000), amount: 1 }, 'sub'],
        [{ iss: `https://${'a'.repeat(100_000)}`, sub: 'someone', amount: 1 }, 'iss'],
      ] as const) {
        const reply = await harness.admin('POST', '/users/credits', body)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe(param)
      }
      expectError(await harness.admin('GET', `/users/allotment?iss=i&sub=${'a'.repeat(300)}`), 400, 'invalid_request')
      expect((await harness.admin('POST', '/users/credits', { iss: 'https://issuer.example', sub: 'a'.repeat(255), amount: 1 })).status).toBe(200)
    })

    test('max_uses 0.5 on a web search tool is a 400 naming it', async () => {
      const { harness } = suite
      const key = await harness.key()
      const reply = await harness.call('POST', '/v1/messages', {
        headers: { 'x-api-key': key.key },
        body: {
          model: 'anthropic/claude-sonnet-4-5',
          max_tokens: 10,
          messages: [{ role: 'user', content: 'hi' }],
          tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 0.5 }],
        },
      })
      expectError(reply, 400, 'invalid_request', 'messages')
      expect(reply.text).toContain('tools[0].max_uses')
    })
  })
}
