import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ENDPOINT_RULES, type EndpointRule } from '../../src/auth/endpoint-rules'
import { envelopeOfPath } from '../../src/errors/render'
import { testDatabases } from '../support/databases'
import { errorCodeOf, expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { IdentityProvider } from '../support/identity-provider'

/**
 * docs/api.md#authentication-per-route as a matrix: every route × Bearer API key / Bearer user token / x-api-key / none.
 * "served" means the credential got through: whatever the endpoint answers next, it is not an
 * authentication or permission error.
 */
type Outcome = 'served' | 'invalid_api_key'
type Column = 'bearerKey' | 'bearerToken' | 'xApiKey' | 'none'

function expected(rule: EndpointRule): Record<Column, Outcome> {
  switch (rule.credentials) {
    case 'public':
    case 'optional-bearer':
      return { bearerKey: 'served', bearerToken: 'served', xApiKey: 'served', none: 'served' }
    case 'bearer-or-x-api-key':
      return { bearerKey: 'served', bearerToken: 'served', xApiKey: 'served', none: 'invalid_api_key' }
    case 'google-api-key':
      return { bearerKey: 'served', bearerToken: 'served', xApiKey: 'invalid_api_key', none: 'invalid_api_key' }
    case 'bearer':
      return {
        bearerKey: 'served',
        bearerToken: rule.apiKeyOnly ? 'invalid_api_key' : 'served',
        xApiKey: 'invalid_api_key',
        none: 'invalid_api_key',
      }
  }
}

const concrete = (path: string) => path.replace('*', 'openai/gpt-5')

describe('route rules matrix (docs/api.md#authentication-per-route)', () => {
  let idp: IdentityProvider
  let apiKey: string
  let userToken: string

  beforeAll(async () => {
    idp = await new IdentityProvider().start()
  })
  const suite = gatewaySuite(testDatabases[0]!, {
    mockUpstream: false,
    env: () => ({ TOLLGATE_OIDC_ISSUER: idp.issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience }),
  })
  beforeAll(async () => {
    apiKey = (await suite.harness.key()).key
    userToken = await idp.token()
  })
  afterAll(() => idp.stop())

  const headersFor = (column: Column): Record<string, string> =>
    ({ bearerKey: bearer(apiKey), bearerToken: bearer(userToken), xApiKey: { 'x-api-key': apiKey }, none: {} })[column]

  for (const rule of ENDPOINT_RULES) {
    for (const column of ['bearerKey', 'bearerToken', 'xApiKey', 'none'] as const) {
      const outcome = expected(rule)[column]
      test(`${rule.method} ${rule.path} with ${column}: ${outcome}`, async () => {
        const reply = await suite.harness.call(rule.method, concrete(rule.path), {
          headers: headersFor(column),
          body: rule.method === 'POST' ? {} : undefined,
        })
        const surface = envelopeOfPath(rule.path)
        if (outcome === 'served') {
          expect([401, 403]).not.toContain(reply.status)
          if (reply.status >= 400) expectError(reply, reply.status, errorCodeOf(reply), surface)
        } else {
          expectError(reply, 401, outcome, surface)
        }
        expect(reply.headers.get('x-request-id')).toMatch(/^req_/)
      })
    }
  }

  test('models routes ignore x-api-key, even a wrong one, and public routes ignore every credential', async () => {
    for (const path of ['/v1/models', '/v1/models/openai/gpt-5']) {
      expect((await suite.harness.call('GET', path, { headers: { 'x-api-key': 'tollgate_sk_prod_wrong' } })).status).toBe(200)
    }
    for (const path of ['/v1/models/coding', '/v1/healthz', '/v1/readyz']) {
      expect((await suite.harness.call('GET', path, { headers: bearer('tollgate_sk_prod_wrong') })).status).toBe(200)
    }
  })

  test('a wrong Bearer credential on an optional-credential route is refused, not ignored', async () => {
    expectError(await suite.harness.call('GET', '/v1/models', { headers: bearer('tollgate_sk_prod_wrong') }), 401, 'invalid_api_key')
  })

  test('HEAD on a GET route follows the GET rule: refused without the credential, served with it', async () => {
    for (const rule of ENDPOINT_RULES.filter((rule) => rule.method === 'GET')) {
      const anonymous = await suite.harness.gateway.handle(new Request(`http://localhost${concrete(rule.path)}`, { method: 'HEAD' }))
      const authorized = await suite.harness.gateway.handle(new Request(`http://localhost${concrete(rule.path)}`, { method: 'HEAD', headers: bearer(apiKey) }))
      expect({ path: rule.path, status: authorized.status }).toEqual({ path: rule.path, status: 200 })
      const anonymousStatus = rule.credentials === 'public' || rule.credentials === 'optional-bearer' ? 200 : 401
      expect({ path: rule.path, status: anonymous.status }).toEqual({ path: rule.path, status: anonymousStatus })
    }
  })

  test('every /v1 route the app serves has exactly one rule, and every rule a route', () => {
    const served = suite.harness.gateway.endpoints
      .filter((endpoint) => endpoint.path.startsWith('/v1/') || endpoint.path.startsWith('/v1beta/'))
      .map((endpoint) => `${endpoint.method} ${endpoint.path}`)
    const ruled = ENDPOINT_RULES.map((rule) => `${rule.method} ${rule.path}`)
    expect(new Set(ruled).size).toBe(ruled.length)
    expect([...served].sort()).toEqual([...ruled].sort())
  })
})
