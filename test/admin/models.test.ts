import { describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

interface RouteState {
  provider: string
  upstream_model: string
  configured: boolean
  cooldown_seconds: number | null
  failures: number
  cooling_until: string | null
}
interface ModelRecord {
  id: string
  type: string
  aliases: string[]
  context_window: number | null
  max_output_tokens: number | null
  pricing: Record<string, number>
  routes: RouteState[]
}
interface ModelsAnswer {
  object: 'list'
  data: ModelRecord[]
  aliases: { id: string; strategy: string; targets: string[] }[]
}

/**
 * GET /admin/v1/models (docs/operations.md#models): the catalogue as configured (the mock
 * catalogue of test/support/mock-catalog.ts, two upstreams), and a route's cooldown as this
 * gateway lives it: three real failed calls to one upstream cool its route down.
 */
describe('GET /admin/v1/models', () => {
  const suite = gatewaySuite(testDatabases[0]!, { secondUpstream: true })
  const models = async (query = '') => {
    const reply = await suite.harness.call('GET', `/admin/v1/models${query}`, { headers: bearer(ADMIN_TOKEN) })
    expect(reply.status).toBe(200)
    return reply.json as ModelsAnswer
  }
  const find = (answer: ModelsAnswer, id: string) => {
    const model = answer.data.find((entry) => entry.id === id)
    if (!model) throw new Error(`${id} is not listed`)
    return model
  }

  test('lists every served model with its aliases, limits, prices and routes in order', async () => {
    const answer = await models()
    expect(answer.object).toBe('list')
    expect(find(answer, 'test/smart')).toEqual({
      id: 'test/smart',
      type: 'chat',
      aliases: ['tollgate/best'],
      context_window: null,
      max_output_tokens: 4000,
      pricing: { input: 3, output: 15, cacheRead: 0.3 },
      routes: [
        { provider: 'a', upstream_model: 'smart-a', configured: true, cooldown_seconds: 30, failures: 0, cooling_until: null },
        { provider: 'b', upstream_model: 'smart-b', configured: true, cooldown_seconds: 30, failures: 0, cooling_until: null },
      ],
    })
    expect(find(answer, 'test/cheap').aliases).toEqual(['tollgate/best'])
    expect(answer.aliases).toEqual([{ id: 'tollgate/best', strategy: 'fallback', targets: ['test/smart', 'test/cheap'] }])
    // The list is the catalogue's served models, as GET /v1/models counts them (aliases apart).
    const served = (await suite.harness.call('GET', '/v1/models', { headers: bearer((await suite.harness.key()).key) })).json as {
      data: { id: string; strategy?: string }[]
    }
    expect(answer.data.map((model) => model.id).sort()).toEqual(
      served.data
        .filter((model) => model.strategy === undefined)
        .map((model) => model.id)
        .sort(),
    )
  })

  test('filters by type; an unknown type or parameter is a 400 naming it; the admin token is required', async () => {
    const chat = await models('?type=chat')
    expect(chat.data.length).toBeGreaterThan(0)
    expect(chat.data.every((model) => model.type === 'chat')).toBe(true)
    const embeddings = await models('?type=embedding')
    expect(embeddings.data.every((model) => model.type === 'embedding')).toBe(true)
    expect(embeddings.data.length + chat.data.length).toBeLessThanOrEqual((await models()).data.length)
    expectError(await suite.harness.call('GET', '/admin/v1/models?type=poem', { headers: bearer(ADMIN_TOKEN) }), 400, 'invalid_request')
    const unknown = await suite.harness.call('GET', '/admin/v1/models?provider=a', { headers: bearer(ADMIN_TOKEN) })
    expectError(unknown, 400, 'invalid_request')
    expect(unknown.json.error.param).toBe('provider')
    expectError(await suite.harness.call('GET', '/admin/v1/models'), 401, 'invalid_api_key')
    expectError(await suite.harness.call('GET', '/admin/v1/models', { headers: bearer('wrong') }), 401, 'invalid_api_key')
  })

  test('a route that failed three times in a row shows its failures and when its cooldown ends; the other route stays clear', async () => {
    const { key } = await suite.harness.key()
    suite.upstream.always({ kind: 'error', status: 503 })
    const before = Date.now()
    for (let call = 0; call < 3; call++) {
      const reply = await suite.harness.call('POST', '/v1/chat/completions', {
        headers: bearer(key),
        body: { model: 'test/smart', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 },
      })
      expect(reply.status).toBe(200)
    }
    const [first, second] = find(await models(), 'test/smart').routes
    expect(first).toMatchObject({ provider: 'a', upstream_model: 'smart-a', failures: 3 })
    const until = Date.parse(first?.cooling_until ?? '')
    expect(until).toBeGreaterThanOrEqual(before + 30_000)
    expect(until).toBeLessThanOrEqual(Date.now() + 30_000)
    expect(second).toMatchObject({ provider: 'b', failures: 0, cooling_until: null })
    suite.upstream.reset()
  })

  test('is documented in /swagger/json with its parameter described and its answer', async () => {
    const spec = (await suite.harness.call('GET', '/swagger/json')).json
    const operation = spec.paths['/admin/v1/models']?.get
    expect(operation).toBeDefined()
    for (const parameter of operation.parameters ?? [])
      expect({ name: parameter.name, description: parameter.description ?? parameter.schema?.description }).toEqual({
        name: parameter.name,
        description: expect.any(String),
      })
    expect(JSON.stringify(operation.responses['200'])).toContain('cooling_until')
  })
})
