import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, type TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { IdentityProvider } from '../support/identity-provider'
import { TcpProxy } from '../support/tcp-proxy'

/**
 * User tokens are read before the identity provider is asked anything: garbage is refused at
 * once (and costs the identity provider nothing), and a plausible token that cannot be checked
 * because the identity provider is away is a 503 to retry, not a verdict.
 */
describe('user tokens and an unreachable identity provider', () => {
  const suite = gatewaySuite(testDatabases[0]!, { mockUpstream: false, gateway: false })
  let idp: IdentityProvider

  beforeAll(async () => {
    idp = await new IdentityProvider().start()
  })
  afterAll(() => idp.stop())

  /** A gateway that has not downloaded any key yet, trusting `issuer` (its JWKS at `jwksUrl`, or discovered). */
  const gatewayFor = (issuer: string, jwksUrl?: string) =>
    suite.instance({ env: { TOLLGATE_OIDC_ISSUER: issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience, TOLLGATE_OIDC_JWKS_URL: jwksUrl } })
  const pricing = (harness: TestGateway, credential: string) => harness.call('GET', '/v1/pricing', { headers: bearer(credential) })
  const timed = async <T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> => {
    const startedAt = performance.now()
    const result = await work()
    return { result, ms: performance.now() - startedAt }
  }

  const base64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
  const malformed = async (): Promise<Record<string, string>> => {
    const real = await idp.token()
    const [header, payload, signature] = real.split('.') as [string, string, string]
    return {
      'not a JWT': 'abc',
      'two segments': `${header}.${payload}`,
      'four segments': `${real}.${signature}`,
      'empty signature': `${header}.${payload}.`,
      'characters outside base64url': `${header}.${payload}.${signature.slice(0, 10)}+/=`,
      'header that is not JSON': `${base64url('{alg: RS256')}.${payload}.${signature}`,
      'header without alg': `${base64url({ kid: 'key-1', typ: 'JWT' })}.${payload}.${signature}`,
      'alg none': `${base64url({ alg: 'none' })}.${payload}.${signature}`,
      'a shared-secret alg': `${base64url({ alg: 'HS256', kid: 'key-1' })}.${payload}.${signature}`,
      'a kid that is not a string': `${base64url({ alg: 'RS256', kid: 7 })}.${payload}.${signature}`,
      'payload that is not JSON': `${header}.${base64url('hello')}.${signature}`,
      'payload that is a JSON array': `${header}.${base64url([1, 2])}.${signature}`,
      'no exp': await idp.token({}, { withoutExpiry: true }),
      'another issuer': await idp.token({}, { issuer: 'https://elsewhere.example' }),
      'another audience': await idp.token({ aud: 'another-api', azp: idp.audience }),
    }
  }

  test('malformed tokens are refused without a single request to the identity provider', async () => {
    const harness = gatewayFor(idp.issuer)
    const before = idp.requests
    for (const [name, token] of Object.entries(await malformed())) {
      const reply = await pricing(harness, token)
      expect({ name, status: reply.status }).toEqual({ name, status: 401 })
      expectError(reply, 401, 'invalid_token')
    }
    expect(idp.requests).toBe(before)
  })

  test('with the identity provider down, "Bearer abc" and other malformed tokens are 401 at once', async () => {
    // Nothing listens on port 9 of loopback: every connection is refused.
    const harness = gatewayFor('http://127.0.0.1:9', 'http://127.0.0.1:9/jwks')
    for (const token of Object.values(await malformed())) {
      const { result, ms } = await timed(() => pricing(harness, token))
      expectError(result, 401, 'invalid_token')
      expect(ms).toBeLessThan(1000)
    }
  })

  test('a well-formed token while the JWKS cannot be fetched: 503 service_unavailable with Retry-After, quickly', async () => {
    const stopped = await new IdentityProvider().start()
    const issuer = stopped.issuer
    const token = await stopped.token()
    stopped.stop()
    for (const harness of [gatewayFor(issuer, `${issuer}/jwks`), gatewayFor(issuer)]) {
      const { result, ms } = await timed(() => pricing(harness, token))
      expectError(result, 503, 'service_unavailable')
      expect(Number(result.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(result.json.error.type).toBe('overloaded_error')
      expect(ms).toBeLessThan(4000)
    }
  })

  test('the messages surface gets the same 503 in its envelope', async () => {
    const harness = gatewayFor('http://127.0.0.1:9', 'http://127.0.0.1:9/jwks')
    const token = await idp.token({}, { issuer: 'http://127.0.0.1:9' })
    const reply = await harness.call('POST', '/v1/messages/count_tokens', { headers: bearer(token), body: {} })
    expectError(reply, 503, 'service_unavailable', 'messages')
    expect(reply.json.error.type).toBe('overloaded_error')
    expect(reply.headers.get('retry-after')).not.toBeNull()
  })

  test('an identity provider that accepts the connection but never answers: 503 within the fetch timeout', async () => {
    const silent = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Promise<Response>(() => {}) })
    try {
      const issuer = silent.url.href.replace(/\/$/, '')
      const harness = gatewayFor(issuer, `${issuer}/jwks`)
      // Signed by another key under the silent issuer's name: before the keys arrive only its form and claims count.
      const token = await idp.token({}, { issuer })
      const { result, ms } = await timed(() => pricing(harness, token))
      expectError(result, 503, 'service_unavailable')
      // The JWKS download is bounded at 3 s; the margin is for a busy machine.
      expect(ms).toBeLessThan(4500)
    } finally {
      silent.stop(true)
    }
  }, 15_000)

  test('the same gateway recovers by itself when the identity provider comes back', async () => {
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(idp.issuer).port)).start()
    try {
      const harness = gatewayFor(idp.issuer, proxy.urlFor(`${idp.issuer}/jwks`))
      const token = await idp.token()
      proxy.cut()
      expectError(await pricing(harness, token), 503, 'service_unavailable')
      proxy.restore()
      expect((await pricing(harness, token)).status).toBe(200)
    } finally {
      proxy.stop()
    }
  })
})
