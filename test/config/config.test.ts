import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Catalog } from '../../src/catalog/catalog'
import { loadConfig } from '../../src/config/config'
import { ConfigError } from '../../src/config/config-error'

const dir = mkdtempSync(join(tmpdir(), 'tollgate-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function withFile(content: unknown): Record<string, string> {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return { TOLLGATE_CONFIG: path }
}

const validFile = {
  providers: {
    main: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'MAIN_KEY' },
    local: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1' },
  },
  models: [
    { id: 'acme/big', type: 'chat', routes: [{ provider: 'main', model: 'big' }], pricing: { input: 1, output: 2 } },
    { id: 'acme/local', type: 'chat', routes: [{ provider: 'local', model: 'small' }], pricing: { input: 0, output: 0 } },
  ],
  aliases: [{ id: 'tollgate/best', strategy: 'fallback', targets: ['acme/big', 'acme/local'] }],
}

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error('expected a ConfigError')
}

describe('environment', () => {
  test('defaults', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8080, dataDir: './data', databaseUrl: undefined, adminToken: undefined, oidc: undefined })
  })
  test('values are read and checked, naming the variable', () => {
    const config = loadConfig({ PORT: '9090', HOST: '0.0.0.0', TOLLGATE_OIDC_ISSUER: 'https://idp.example', TOLLGATE_OIDC_AUDIENCE: 'tg' })
    expect(config).toMatchObject({ port: 9090, host: '0.0.0.0', oidc: { issuer: 'https://idp.example', audience: 'tg', scope: 'inference' } })
    expect(configError({ PORT: 'eighty' })).toContain('PORT')
    expect(configError({ PORT: '70000' })).toContain('PORT')
    expect(configError({ DATABASE_URL: 'mysql://x' })).toContain('DATABASE_URL')
    expect(configError({ TOLLGATE_OIDC_ISSUER: 'idp.example' })).toContain('TOLLGATE_OIDC_ISSUER')
  })
  test('empty variables count as unset', () => {
    expect(loadConfig({ PORT: '', TOLLGATE_ADMIN_TOKEN: '' })).toMatchObject({ port: 8080, adminToken: undefined })
  })
})

describe('built-in catalogue', () => {
  test("a provider's models are listed only once its credential is set", () => {
    const none = new Catalog(loadConfig({}))
    expect(none.listModels()).toEqual([])
    expect(none.listAliases()).toEqual([])
    const some = new Catalog(loadConfig({ ANTHROPIC_API_KEY: 'k', GROQ_API_KEY: 'g' }))
    const vendors = new Set(some.listModels().map((model) => model.id.split('/')[0]))
    expect([...vendors].sort()).toEqual(['anthropic', 'groq'])
    expect(some.alias('tollgate/smart')).toBeDefined()
  })
  test('covers the major vendors with real list prices', () => {
    const all = new Catalog(
      loadConfig({
        OPENAI_API_KEY: 'k',
        ANTHROPIC_API_KEY: 'k',
        GEMINI_API_KEY: 'k',
        GROQ_API_KEY: 'k',
        MISTRAL_API_KEY: 'k',
        DEEPSEEK_API_KEY: 'k',
        OPENROUTER_API_KEY: 'k',
        OLLAMA_BASE_URL: 'http://127.0.0.1:11434/v1',
        VERTEX_PROJECT: 'p',
        VERTEX_ACCESS_TOKEN: 't',
      }),
    )
    const vendors = new Set(all.listModels().map((model) => model.id.split('/')[0]))
    expect([...vendors].sort()).toEqual(['anthropic', 'deepseek', 'google', 'groq', 'mistral', 'ollama', 'openai', 'openrouter'])
    expect(all.model('anthropic/claude-sonnet-4-5')?.pricing).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, webSearch: 0.01 })
    expect(all.model('openai/gpt-5')?.pricing).toEqual({ input: 1.25, output: 10, cacheRead: 0.125 })
    expect(all.model('google/veo-3.1-generate')?.videoFamily).toBe('A')
    expect(all.model('openai/sora-2')?.videoFamily).toBe('B')
  })
})

describe('config file', () => {
  test('the example in the README is a valid config', () => {
    const example = /```json\n([\s\S]*?)```/.exec(readFileSync('README.md', 'utf8'))?.[1]
    expect(example).toBeDefined()
    const config = loadConfig({ ...withFile(example!), ANTHROPIC_API_KEY: 'k' })
    expect(new Catalog(config).listModels().map((model) => model.id)).toEqual(['anthropic/claude-sonnet-4-5', 'local/qwen'])
  })

  test('replaces the built-in catalogue; keyless providers are always configured', () => {
    const config = loadConfig({ ...withFile(validFile), OPENAI_API_KEY: 'k' })
    const catalog = new Catalog(config)
    expect(catalog.listModels().map((model) => model.id)).toEqual(['acme/local'])
    expect(catalog.listAliases().map((alias) => alias.id)).toEqual(['tollgate/best'])
    const withKey = loadConfig({ ...withFile(validFile), MAIN_KEY: 'secret' })
    expect(withKey.providers.get('main')).toMatchObject({
      credential: 'secret',
      configured: true,
      pollIntervalMs: 5000,
      jobTimeoutMs: 900_000,
      streamIdleTimeoutMs: 120_000,
      cooldownSeconds: 30,
    })
    expect(new Catalog(withKey).listModels()).toHaveLength(2)
  })
  test("provider timeouts and a family A model's clip lengths are read from the file", () => {
    const file = structuredClone(validFile) as any
    file.providers.main = { ...file.providers.main, streamIdleTimeoutMs: 30_000, jobTimeoutMs: 60_000, cooldownSeconds: 0.5 }
    file.providers.local = { ...file.providers.local, cooldownSeconds: 0 }
    file.models.push({
      id: 'acme/clip',
      type: 'video',
      videoFamily: 'A',
      videoDurations: [5, 10],
      routes: [{ provider: 'main', model: 'v' }],
      pricing: { videoSecond: 0.1 },
    })
    const config = loadConfig(withFile(file))
    expect(config.providers.get('main')).toMatchObject({ streamIdleTimeoutMs: 30_000, jobTimeoutMs: 60_000, cooldownSeconds: 0.5 })
    expect(config.providers.get('local')?.cooldownSeconds).toBe(0)
    expect(config.models.find((model) => model.id === 'acme/clip')?.videoDurations).toEqual([5, 10])
  })
  test('./tollgate.json is used when present and TOLLGATE_CONFIG is unset', () => {
    const previous = process.cwd()
    process.chdir(dir)
    try {
      writeFileSync(join(dir, 'tollgate.json'), JSON.stringify(validFile))
      expect(loadConfig({}).models.map((model) => model.id)).toEqual(['acme/big', 'acme/local'])
    } finally {
      rmSync(join(dir, 'tollgate.json'))
      process.chdir(previous)
    }
  })
  test('a bad file stops the start with a message naming the bad path', () => {
    const broken = (mutate: (file: any) => void) => {
      const file = structuredClone(validFile) as any
      mutate(file)
      return configError(withFile(file))
    }
    expect(broken((file) => (file.models[1].pricing.input = -1))).toContain('models[1].pricing.input')
    expect(broken((file) => (file.models[0].routes[0].provider = 'nowhere'))).toContain('models[0].routes[0].provider')
    expect(broken((file) => (file.providers.main.api = 'soap'))).toContain('providers.main.api')
    expect(broken((file) => (file.models[0].type = 'hologram'))).toContain('models[0].type')
    expect(broken((file) => (file.models[0].colour = 'blue'))).toContain('models[0]')
    expect(broken((file) => file.models.push({ ...file.models[0] }))).toContain('duplicate model id')
    expect(broken((file) => (file.aliases[0].targets = ['acme/missing']))).toContain('aliases[0].targets[0]')
    expect(broken((file) => (file.aliases[0].id = 'best'))).toContain('aliases[0].id')
    expect(broken((file) => (file.models[0].id = 'custom/x'))).toContain('reserved')
    expect(broken((file) => file.models.push({ id: 'acme/clip', type: 'video', routes: [{ provider: 'main', model: 'v' }], pricing: {} }))).toContain(
      'videoFamily',
    )
    expect(
      broken(
        (file) =>
          (file.providers.vx = { api: 'vertex', baseUrl: 'http://127.0.0.1:9', project: 'p', location: 'l', serviceAccountKeyFile: join(dir, 'no-key.json') }),
      ),
    ).toContain('providers.vx.serviceAccountKeyFile')
    expect(broken((file) => (file.providers.vx = { api: 'vertex', baseUrl: 'http://127.0.0.1:9' }))).toContain('providers.vx')
    expect(broken((file) => (file.providers.main.streamIdleTimeoutMs = 0))).toContain('providers.main.streamIdleTimeoutMs')
    expect(broken((file) => (file.providers.main.jobTimeoutMs = 1.5))).toContain('providers.main.jobTimeoutMs')
    expect(broken((file) => (file.providers.main.cooldownSeconds = -1))).toContain('providers.main.cooldownSeconds')
    expect(broken((file) => (file.providers.main.cooldownSeconds = '30'))).toContain('providers.main.cooldownSeconds')
    expect(broken((file) => (file.providers.main.cooldownSeconds = 86_401))).toContain('providers.main.cooldownSeconds')
    const clip = (extra: object) => ({ id: 'acme/clip', type: 'video', routes: [{ provider: 'main', model: 'v' }], pricing: {}, ...extra })
    expect(broken((file) => file.models.push(clip({ videoFamily: 'A', videoDurations: [4, 4.5] })))).toContain('models[2].videoDurations')
    expect(broken((file) => file.models.push(clip({ videoFamily: 'A', videoDurations: [] })))).toContain('models[2].videoDurations')
    expect(broken((file) => file.models.push(clip({ videoFamily: 'B', videoDurations: [4, 8] })))).toContain('only family A')
    expect(configError(withFile('{ not json'))).toContain('not valid JSON')
    expect(configError({ TOLLGATE_CONFIG: join(dir, 'missing.json') })).toContain('cannot read')
  })
})

describe('config errors that say where', () => {
  test('invalid JSON names the line and column of the first mistake, and what was expected there', () => {
    const cases: [string, string][] = [
      [
        '{\n  "providers": {},\n  "models": [\n    { "id": "acme/big", },\n  ]\n}',
        ':4:25: not valid JSON: found "},", expected a member name in double quotes (JSON allows no comma before "}")',
      ],
      ['{\n  "providers": {}\n  "models": []\n}', ':3:3: not valid JSON: found "\\"models\\": []", expected "," or "}"'],
      ['{"providers": {}, "models": [1, 2,]}', ':1:35: not valid JSON: found "]}", expected a value (JSON allows no comma before "]")'],
      ["{'providers': {}}", `:1:2: not valid JSON: found "'providers':", expected a member name in double quotes`],
      ['{"models": [', ':1:13: not valid JSON: found the end of the text, expected a value'],
      ['{"a": "line\nbreak"}', ':1:12: not valid JSON: found the end of the line, expected no control character inside a string (write \\n for a line break)'],
      ['{"a": 1} {"b": 2}', ':1:10: not valid JSON: found "{\\"b\\": 2}", expected the end of the text after the top-level value'],
    ]
    for (const [text, expected] of cases) {
      const env = withFile(text)
      expect(configError(env)).toBe(`${env.TOLLGATE_CONFIG}${expected}`)
    }
    // A byte order mark in front (some editors write one) is read past.
    expect(loadConfig(withFile(`\uFEFF${JSON.stringify(validFile)}`)).models.map((model) => model.id)).toEqual(['acme/big', 'acme/local'])
  })

  test('every schema error is listed with its path, up to 20, then how many more', () => {
    const file = structuredClone(validFile) as any
    file.providers.main.api = 'soap'
    file.models[0].pricing.input = -1
    file.models[1].type = 'hologram'
    file.aliases[0].strategy = 'random'
    const env = withFile(file)
    let error: ConfigError | undefined
    try {
      loadConfig(env)
    } catch (caught) {
      error = caught as ConfigError
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect(error?.message).toStartWith(`${env.TOLLGATE_CONFIG}: 4 errors: `)
    const listed = error?.fields.errors as string[]
    expect(listed.map((line) => line.slice(0, line.indexOf(':')))).toEqual([
      'providers.main.api',
      'models[0].pricing.input',
      'models[1].type',
      'aliases[0].strategy',
    ])
    for (const line of listed) expect(error?.message).toContain(line)

    const many = structuredClone(validFile) as any
    many.models = Array.from({ length: 25 }, (_, index) => ({
      id: `acme/m${index}`,
      type: 'chat',
      routes: [{ provider: 'main', model: 'm' }],
      pricing: { input: 'free' },
    }))
    const manyEnv = withFile(many)
    let manyError: ConfigError | undefined
    try {
      loadConfig(manyEnv)
    } catch (caught) {
      manyError = caught as ConfigError
    }
    expect(manyError?.fields.errors).toHaveLength(20)
    expect(manyError?.fields.more_errors).toBe(5)
    expect(manyError?.message).toStartWith(`${manyEnv.TOLLGATE_CONFIG}: 25 errors: models[0].pricing.input: Expected number; models[1].pricing.input`)
    expect(manyError?.message).toEndWith('models[19].pricing.input: Expected number; and 5 more')
  })

  test('the environment lists every bad variable at once', () => {
    expect(configError({ PORT: 'eighty', TOLLGATE_LOG_LEVEL: 'loud', REDIS_URL: 'memcached://x' })).toBe(
      `environment: 3 errors: PORT: Expected string to match '^[0-9]{1,5}$'; REDIS_URL: Expected string to match '^rediss?://'; TOLLGATE_LOG_LEVEL: Expected one of "debug", "info", "warn", "error"`,
    )
    expect(configError({ TOLLGATE_DB_WAIT_SECONDS: '3601' })).toBe('environment: TOLLGATE_DB_WAIT_SECONDS must be between 0 and 3600 (got 3601)')
    expect(configError({ TOLLGATE_DB_WAIT_SECONDS: '-1' })).toContain('TOLLGATE_DB_WAIT_SECONDS')
    expect(loadConfig({}).databaseWaitMs).toBe(30_000)
    expect(loadConfig({ TOLLGATE_DB_WAIT_SECONDS: '0' }).databaseWaitMs).toBe(0)
  })
})
