import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { periodSpend } from '../../src/db/schema'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, startGateway, testConfig } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { IdentityProvider } from '../support/identity-provider'

/** Every error of docs/api.md#credentials, with user tokens signed for real and checked against a live JWKS. */
describe('authentication errors (docs/api.md#credentials)', () => {
  let idp: IdentityProvider
  let clock = Date.now()

  beforeAll(async () => {
    idp = await new IdentityProvider().start()
  })
  const suite = gatewaySuite(testDatabases[0]!, {
    env: () => ({ TOLLGATE_OIDC_ISSUER: idp.issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience, TOLLGATE_OIDC_JWKS_URL: `${idp.issuer}/jwks` }),
    now: () => clock,
  })
  afterAll(() => idp.stop())

  const pricing = (headers: Record<string, string>) => suite.harness.call('GET', '/v1/pricing', { headers })
  const chat = (headers: Record<string, string>, model = 'test/cheap') =>
    suite.harness.call('POST', '/v1/chat/completions', { headers, body: { model, messages: [{ role: 'user', content: 'hi' }] } })

  describe('401 invalid_api_key', () => {
    test('missing header', async () => expectError(await pricing({}), 401, 'invalid_api_key'))
    test('malformed header', async () => expectError(await pricing({ authorization: 'Basic dXNlcjpwYXNz' }), 401, 'invalid_api_key'))
    test('empty Bearer', async () => expectError(await pricing({ authorization: 'Bearer ' }), 401, 'invalid_api_key'))
    test('wrong service word', async () => {
      const { key } = await suite.harness.key()
      expectError(await pricing(bearer(key.replace('tollgate_', 'openai_'))), 401, 'invalid_api_key')
    })
    test('wrong environment part', async () => {
      const { key } = await suite.harness.key()
      expectError(await pricing(bearer(key.replace('_prod_', '_test_'))), 401, 'invalid_api_key')
    })
    test('secret too short', async () => expectError(await pricing(bearer('tollgate_sk_prod_abc')), 401, 'invalid_api_key'))
    // Made-up keys in each provider's shape (none is a real credential).
    const providerKeys: [string, string][] = [
      [`sk-proj-${'Ab3'.repeat(40)}`, 'an OpenAI API key'],
      [`sk-ant-api03-${'Xy9_'.repeat(22)}AA`, 'an Anthropic API key'],
      [`sk-or-v1-${'0f'.repeat(32)}`, 'an OpenRouter API key'],
      [`sk-${'a1'.repeat(16)}`, 'a provider API key (sk-'],
      [`AIzaSy${'B7_q'.repeat(8)}x`, 'a Google API key'],
      [`gsk_${'Q2w'.repeat(17)}`, 'a Groq API key'],
    ]
    for (const [credential, looksLike] of providerKeys) {
      test(`a provider key pasted as the credential (${looksLike}) is told what it looks like, never echoed`, async () => {
        const messages = await suite.harness.call('POST', '/v1/messages', {
          headers: { 'x-api-key': credential, 'anthropic-version': '2023-06-01' },
          body: { model: 'test/cheap', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
        })
        const replies = [
          { reply: await pricing(bearer(credential)), envelope: 'openai' as const },
          { reply: messages, envelope: 'messages' as const },
        ]
        for (const { reply, envelope } of replies) {
          expectError(reply, 401, 'invalid_api_key', envelope)
          expect(reply.json.error.message).toContain(`looks like ${looksLike}`)
          expect(reply.json.error.message).toContain('tollgate_sk_prod_')
          expect(reply.text).not.toContain(credential.slice(8, 24))
        }
      })
    }
    test('unknown key', async () => {
      const { key } = await suite.harness.key()
      expectError(await pricing(bearer(`${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`)), 401, 'invalid_api_key')
    })
    test('revoked key, at once on the instance that revoked', async () => {
      const { id, key } = await suite.harness.key()
      expect((await pricing(bearer(key))).status).toBe(200)
      expect((await suite.harness.admin('POST', `/keys/${id}/revoke`)).status).toBe(200)
      expectError(await pricing(bearer(key)), 401, 'invalid_api_key')
    })
    test('expired key', async () => {
      const { key } = await suite.harness.key({ expires_at: new Date(clock + 60_000).toISOString() })
      expect((await pricing(bearer(key))).status).toBe(200)
      clock += 61_000
      expectError(await pricing(bearer(key)), 401, 'invalid_api_key')
    })
    test('a dev key works like a prod key', async () => {
      const { key } = await suite.harness.key({ env: 'dev' })
      expect(key).toStartWith('tollgate_sk_dev_')
      expect((await pricing(bearer(key))).status).toBe(200)
    })
    test('messages-format envelope on /v1/messages*', async () => {
      expectError(
        await suite.harness.call('POST', '/v1/messages/count_tokens', { headers: { 'x-api-key': 'nope' }, body: {} }),
        401,
        'invalid_api_key',
        'messages',
      )
      const reply = await suite.harness.call('POST', '/v1/messages/count_tokens', { body: {} })
      expectError(reply, 401, 'invalid_api_key', 'messages')
      expect(reply.json.error.type).toBe('authentication_error')
    })
  })

  describe('401 invalid_token', () => {
    test('expired', async () => {
      expectError(await pricing(bearer(await idp.token({}, { expiresIn: Math.floor(Date.now() / 1000) - 60 }))), 401, 'invalid_token')
    })
    test('issued for another client', async () => {
      expectError(await pricing(bearer(await idp.token({ aud: 'someone-else' }))), 401, 'invalid_token')
    })
    test('issued for another API, even when azp names the client', async () => {
      expectError(await pricing(bearer(await idp.token({ aud: 'api', azp: idp.audience }))), 401, 'invalid_token')
    })
    test('without exp: a token that never expires', async () => {
      const reply = await pricing(bearer(await idp.token({}, { withoutExpiry: true })))
      expectError(reply, 401, 'invalid_token')
      expect(reply.json.error.message).toContain('exp')
    })
    test('from another issuer', async () => {
      expectError(await pricing(bearer(await idp.token({}, { issuer: 'https://evil.example' }))), 401, 'invalid_token')
    })
    test('with a subject longer than OpenID Connect allows (255 characters)', async () => {
      const reply = await pricing(bearer(await idp.token({ sub: 'u'.repeat(256) })))
      expectError(reply, 401, 'invalid_token')
      expect(reply.json.error.message).toContain('255')
    })
    test('badly signed', async () => expectError(await pricing(bearer(await idp.forgedToken())), 401, 'invalid_token'))
    test('signed by an unknown kid', async () => {
      expectError(await pricing(bearer(await idp.token({}, { kid: 'never-published', unpublishedKey: true }))), 401, 'invalid_token')
    })
    test('not a JWT at all', async () => expectError(await pricing(bearer('not-a-jwt')), 401, 'invalid_token'))
    test('refused when no identity provider is configured', async () => {
      const plain = startGateway(suite.database)
      expectError(await plain.call('GET', '/v1/pricing', { headers: bearer(await idp.token()) }), 401, 'invalid_token')
    })
  })

  describe('user tokens that pass', () => {
    test('are accepted, create the user once with an empty allotment', async () => {
      const token = await idp.token({ sub: 'first-timer' })
      expect((await pricing(bearer(token))).status).toBe(200)
      expect((await pricing(bearer(token))).status).toBe(200)
      const allotment = await suite.harness.admin('GET', `/users/allotment?iss=${encodeURIComponent(idp.issuer)}&sub=first-timer`)
      expect(allotment.json).toEqual({
        balance: 0,
        held: 0,
        available: 0,
        quotas: { day: null, week: null, month: null },
        quotas_from: null,
        spent: { day: 0, week: 0, month: 0 },
      })
    })
    test('may name the client in azp when they carry no aud, and carry scopes as an scp array', async () => {
      expect((await pricing(bearer(await idp.token({ azp: idp.audience, scope: undefined, scp: ['inference'] }, { withoutAudience: true })))).status).toBe(200)
    })
    test('the JWKS is downloaded once and again only for an unknown kid', async () => {
      await pricing(bearer(await idp.token()))
      const before = idp.jwksRequests
      for (let i = 0; i < 3; i++) expect((await pricing(bearer(await idp.token()))).status).toBe(200)
      expect(idp.jwksRequests).toBe(before)
      await idp.rotate('key-2')
      expect((await pricing(bearer(await idp.token({}, { kid: 'key-2' })))).status).toBe(200)
      expect(idp.jwksRequests).toBe(before + 1)
    })
    test('the JWKS location is discovered from the issuer when not configured', async () => {
      const discovered = startGateway(suite.database, {
        config: testConfig({ TOLLGATE_OIDC_ISSUER: idp.issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience }),
      })
      expect(discovered.services.config.oidc?.jwksUrl).toBeUndefined()
      expect((await discovered.call('GET', '/v1/pricing', { headers: bearer(await idp.token()) })).status).toBe(200)
    })
  })

  test('401 insufficient_scope: a user token without the inference scope', async () => {
    const reply = await pricing(bearer(await idp.token({ scope: 'openid profile' })))
    expectError(reply, 401, 'insufficient_scope')
    expect(reply.json.error.type).toBe('authentication_error')
  })

  test('403 insufficient_scope: an API key whose scopes exclude the endpoint', async () => {
    const { key } = await suite.harness.key({ scopes: ['chat'] })
    expectError(await pricing(bearer(key)), 403, 'insufficient_scope')
    expectError(await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key) }), 403, 'insufficient_scope')
    expectError(await suite.harness.call('POST', '/v1/messages', { headers: { 'x-api-key': key }, body: {} }), 403, 'insufficient_scope', 'messages')
    // Within its scopes the key gets past authorization.
    expect([401, 403]).not.toContain((await chat(bearer(key))).status)
    // The models routes need no scope.
    expect((await suite.harness.call('GET', '/v1/models', { headers: bearer(key) })).status).toBe(200)
  })

  test("403 model_not_allowed: a model outside the key's allowed models", async () => {
    const { key } = await suite.harness.key({ allowed_models: ['anthropic/*', 'test/cheap'] })
    suite.upstream.reset()
    expectError(await chat(bearer(key), 'test/smart'), 403, 'model_not_allowed')
    expect(suite.upstream.received).toHaveLength(0)
    const { key: chatOnly } = await suite.harness.key({ allowed_models: ['test/*'] })
    const messages = await suite.harness.call('POST', '/v1/messages', {
      headers: { 'x-api-key': chatOnly },
      body: { model: 'anthropic/claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    })
    expectError(messages, 403, 'model_not_allowed', 'messages')
    expect((await chat(bearer(key), 'test/cheap')).status).toBe(200)
    expect([403, 404]).not.toContain((await chat(bearer(key), 'anthropic/claude-test')).status)
    expectError(await chat(bearer(key), 'test/no-such-model'), 404, 'model_not_found')
  })

  test('403 api_key_quota_exceeded: the monthly quota is reached', async () => {
    const { id, key } = await suite.harness.key({ monthly_quota: 1.5 })
    expect((await chat(bearer(key))).status).toBe(200)
    const spent = (await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key) })).json.key.month_spent
    expect(spent).toBeGreaterThan(0)
    // Charges this month reaching exactly the quota.
    await suite.database.db
      .update(periodSpend)
      .set({ charged: 1_500_000n })
      .where(and(eq(periodSpend.spenderId, id), eq(periodSpend.period, new Date(clock).toISOString().slice(0, 7))))
    expectError(await chat(bearer(key)), 403, 'api_key_quota_exceeded')
    const wallet2 = await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key) })
    expect(wallet2.json.key).toMatchObject({ monthly_quota: 1.5, month_spent: 1.5 })
  })
})
