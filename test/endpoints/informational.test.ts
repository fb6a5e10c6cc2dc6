import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { IdentityProvider } from '../support/identity-provider'

const ids = (reply: { json: { data: { id: string }[] } }) => reply.json.data.map((model) => model.id)

describe('models, pricing and wallet', () => {
  let idp: IdentityProvider

  beforeAll(async () => {
    idp = await new IdentityProvider().start()
  })
  // Only OpenAI and Anthropic credentials are set (testConfig): Google, Groq & co stay hidden.
  const suite = gatewaySuite(testDatabases[0]!, {
    mockUpstream: false,
    env: () => ({ TOLLGATE_OIDC_ISSUER: idp.issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience }),
  })
  afterAll(() => idp.stop())

  test("GET /v1/models lists configured providers' models and aliases in OpenAI's list shape", async () => {
    const reply = await suite.harness.call('GET', '/v1/models')
    expect(reply.json.object).toBe('list')
    const listed = ids(reply)
    expect(listed).toContain('openai/gpt-5')
    expect(listed).toContain('anthropic/claude-sonnet-4-5')
    expect(listed).toContain('tollgate/smart')
    expect(listed.some((id) => id.startsWith('google/') || id.startsWith('groq/'))).toBe(false)
    const model = reply.json.data.find((entry: { id: string }) => entry.id === 'openai/gpt-5')
    expect(model).toMatchObject({ object: 'model', owned_by: 'openai', type: 'chat', context_window: 400000 })
    expect(model.created).toBeInteger()
  })

  test("a key sees only its allowed models and its own account's custom models", async () => {
    const { key, accountId } = await suite.harness.key({ allowed_models: ['anthropic/*', 'custom/*'] })
    await suite.harness.admin('POST', '/custom-models', { account_id: accountId, name: 'mine', base_model: 'anthropic/claude-haiku-4-5' })
    const other = await suite.harness.key()
    await suite.harness.admin('POST', '/custom-models', { account_id: other.accountId, name: 'theirs', base_model: 'openai/gpt-5' })

    const listed = ids(await suite.harness.call('GET', '/v1/models', { headers: bearer(key) }))
    expect(listed.every((id) => id.startsWith('anthropic/') || id.startsWith('custom/'))).toBe(true)
    expect(listed).toContain('custom/mine')
    expect(listed).not.toContain('custom/theirs')
    expect(ids(await suite.harness.call('GET', '/v1/models'))).not.toContain('custom/mine')

    const retrieve = (id: string, credential: string) => suite.harness.call('GET', `/v1/models/${id}`, { headers: bearer(credential) })
    expect((await retrieve('custom/mine', key)).json).toMatchObject({ id: 'custom/mine', base_model: 'anthropic/claude-haiku-4-5' })
    expectError(await retrieve('custom/theirs', key), 404, 'model_not_found')
    expectError(await retrieve('openai/gpt-5', key), 404, 'model_not_found')
    expect((await retrieve('openai/gpt-5', other.key)).status).toBe(200)
    // Calling another account's custom model: it does not exist for this key.
    const call = await suite.harness.call('POST', '/v1/chat/completions', {
      headers: bearer(key),
      body: { model: 'custom/theirs', messages: [{ role: 'user', content: 'hi' }] },
    })
    expectError(call, 404, 'model_not_found')
  })

  test('GET /v1/models/{id} takes the slash raw or encoded', async () => {
    expect((await suite.harness.call('GET', '/v1/models/openai/gpt-5')).json.id).toBe('openai/gpt-5')
    expect((await suite.harness.call('GET', '/v1/models/openai%2Fgpt-5')).json.id).toBe('openai/gpt-5')
    expect((await suite.harness.call('GET', '/v1/models/tollgate%2Fsmart')).json).toMatchObject({ id: 'tollgate/smart', strategy: 'fallback' })
    expectError(await suite.harness.call('GET', '/v1/models/google/gemini-2.5-pro'), 404, 'model_not_found')
    expectError(await suite.harness.call('GET', '/v1/models/%E0%A4%A'), 404, 'model_not_found')
  })

  test('GET /v1/models/coding lists the coding-tagged models of configured providers', async () => {
    const listed = ids(await suite.harness.call('GET', '/v1/models/coding'))
    expect(listed).toContain('anthropic/claude-sonnet-4-5')
    expect(listed).toContain('openai/gpt-5')
    expect(listed).not.toContain('openai/gpt-4o-mini')
    expect(listed).not.toContain('google/gemini-2.5-pro')
  })

  test("GET /v1/pricing shows the config's units, omits absent prices, follows allowed models", async () => {
    const { key } = await suite.harness.key({ allowed_models: ['anthropic/claude-sonnet-4-5', 'openai/text-embedding-3-small'] })
    const reply = await suite.harness.call('GET', '/v1/pricing', { headers: bearer(key) })
    expect(reply.json).toEqual({
      object: 'list',
      data: [
        { model: 'openai/text-embedding-3-small', unit: 'credits', input: 0.02 },
        { model: 'anthropic/claude-sonnet-4-5', unit: 'credits', input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, webSearch: 0.01 },
      ],
    })
    const forUser = await suite.harness.call('GET', '/v1/pricing', { headers: bearer(await idp.token()) })
    expect(forUser.json.data.length).toBeGreaterThan(10)
  })

  test("GET /v1/wallet: the account wallet, the key's allotment and its month", async () => {
    const { id: accountId } = await suite.harness.account(25)
    const plain = await suite.harness.key({ account_id: accountId })
    const allotted = await suite.harness.key({ account_id: accountId, allotment: 4.25, monthly_quota: 100 })

    expect((await suite.harness.call('GET', '/v1/wallet', { headers: bearer(plain.key) })).json).toEqual({
      object: 'wallet',
      balance: 25,
      held: 0,
      available: 25,
      payer: 'wallet',
      key: {
        id: plain.id,
        env: 'prod',
        allotment: null,
        monthly_quota: null,
        month_spent: 0,
        quotas: { day: null, week: null, month: null },
        spent: { day: 0, week: 0, month: 0 },
      },
    })
    expect((await suite.harness.call('GET', '/v1/wallet', { headers: bearer(allotted.key) })).json).toMatchObject({
      balance: 25,
      payer: 'allotment',
      key: {
        id: allotted.id,
        allotment: { balance: 4.25, held: 0, available: 4.25 },
        monthly_quota: 100,
        month_spent: 0,
        quotas: { day: null, week: null, month: 100 },
      },
    })
  })
})
