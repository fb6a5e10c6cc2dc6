import { describe, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config/config'
import { configSecrets } from '../../src/config/secrets'
import { KnownSecrets, MIN_SECRET_LENGTH } from '../../src/util/known-secrets'

const R = '[redacted]'

describe('secrets known by value', () => {
  test('every written form of a value is replaced: as it is, percent-encoded in either case, JSON-escaped', () => {
    const secrets = new KnownSecrets()
    const secret = 'key/with spaces+&"quotes"=9'
    secrets.set('config', [secret])
    const forms = [
      secret,
      encodeURIComponent(secret),
      encodeURIComponent(secret).toLowerCase(),
      new URLSearchParams({ key: secret }).toString().slice('key='.length),
      encodeURI(secret),
      JSON.stringify(secret).slice(1, -1),
      JSON.stringify(secret).slice(1, -1).replaceAll('/', '\\/'),
    ]
    for (const form of forms) expect(secrets.scrub(`before ${form} after`, R)).toBe(`before ${R} after`)
    expect(secrets.scrub(`https://api.example/v1?key=${encodeURIComponent(secret)}&alt=sse`, R)).toBe(`https://api.example/v1?key=${R}&alt=sse`)
    expect(secrets.scrub(JSON.stringify({ message: `Incorrect API key provided: ${secret}` }), R)).toBe(`{"message":"Incorrect API key provided: ${R}"}`)
  })

  test('a value of any shape, regular-expression characters included; text without one is returned as it is', () => {
    const secrets = new KnownSecrets()
    secrets.set('config', ['upstream-openai-key-7f3a9c51', 'a.b*c+d?(e)[f]{g}|h^$\\i'])
    expect(secrets.scrub('Incorrect API key provided: upstream-openai-key-7f3a9c51.', R)).toBe(`Incorrect API key provided: ${R}.`)
    expect(secrets.scrub('x a.b*c+d?(e)[f]{g}|h^$\\i y', R)).toBe(`x ${R} y`)
    expect(secrets.scrub('aXb*c+d?(e)[f]{g}|h^$\\i', R)).toBe('aXb*c+d?(e)[f]{g}|h^$\\i')
    const plain = 'The model gpt-test does not exist.'
    expect(secrets.scrub(plain, R)).toBe(plain)
  })

  test(`values shorter than ${MIN_SECRET_LENGTH} characters are left alone, so ordinary words are not mangled`, () => {
    const secrets = new KnownSecrets()
    secrets.set('config', ['test', 'sk-test', undefined, '', 'long-enough'])
    expect(secrets.scrub('a test of sk-test and long-enough', R)).toBe(`a test of sk-test and ${R}`)
  })

  test('a longer value that contains a shorter one is replaced whole', () => {
    const secrets = new KnownSecrets()
    secrets.set('config', ['token-12345678', 'token-12345678-extended'])
    expect(secrets.scrub('x token-12345678-extended y token-12345678 z', R)).toBe(`x ${R} y ${R} z`)
  })

  test('a group is replaced by its next values; other groups stay; a forgotten group is no longer scrubbed', () => {
    const secrets = new KnownSecrets()
    secrets.set('config', ['first-secret-1'])
    secrets.set('service account', ['minted-token-1'])
    secrets.set('config', ['second-secret-2'])
    expect(secrets.scrub('first-secret-1 second-secret-2 minted-token-1', R)).toBe(`first-secret-1 ${R} ${R}`)
    secrets.forget('config')
    secrets.forget('service account')
    expect(secrets.scrub('second-secret-2 minted-token-1', R)).toBe('second-secret-2 minted-token-1')
  })

  test("a config's credentials: provider keys from the file and the environment, tokens, OTLP headers, URL passwords", () => {
    const config = loadConfig({
      OPENAI_API_KEY: 'openai-env-key-0001',
      ANTHROPIC_API_KEY: 'anthropic-env-key-0002',
      TOLLGATE_ADMIN_TOKEN: 'admin-token-0003',
      TOLLGATE_METRICS_TOKEN: 'metrics-token-0004',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=collector-key-0005,authorization=Bearer%20collector-bearer-0006',
      DATABASE_URL: 'postgres://tollgate:db%2Fpassword-0007@db:5432/tollgate',
      REDIS_URL: 'redis://:redis-password-0008@redis:6379',
    })
    expect(configSecrets(config)).toEqual(
      expect.arrayContaining([
        'openai-env-key-0001',
        'anthropic-env-key-0002',
        'admin-token-0003',
        'metrics-token-0004',
        'collector-key-0005',
        'Bearer collector-bearer-0006',
        'collector-bearer-0006',
        'db/password-0007',
        'redis-password-0008',
      ]),
    )
  })
})
