import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { catalogCoverage } from '../../src/catalog/coverage'
import { loadConfig } from '../../src/config/config'
import { describeDatabase } from '../../src/db/describe-database'
import { catalogWarnings, startLines } from '../../src/lifecycle/start-summary'
import { ChildGateway } from './child-gateway'

/** A config file with one provider that has its key and one whose variable is unset. */
function configWithMissingCredential(directory: string): string {
  const path = join(directory, 'tollgate.json')
  writeFileSync(
    path,
    JSON.stringify({
      providers: {
        keyed: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-keyed' },
        unkeyed: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'LIFECYCLE_UNSET_KEY' },
      },
      models: [
        { id: 'test/kept', type: 'chat', routes: [{ provider: 'keyed', model: 'kept' }], pricing: { input: 1, output: 1 } },
        { id: 'test/orphan', type: 'chat', routes: [{ provider: 'unkeyed', model: 'orphan' }], pricing: { input: 1, output: 1 } },
      ],
      aliases: [
        { id: 'tollgate/pair', strategy: 'fallback', targets: ['test/orphan', 'test/kept'] },
        { id: 'tollgate/lost', strategy: 'fallback', targets: ['test/orphan'] },
      ],
    }),
  )
  return path
}

describe('what a catalogue serves and hides', () => {
  test('a model whose every provider lacks its credential is hidden, with the variable to set and the aliases that name it', () => {
    const directory = mkdtempSync(join(tmpdir(), 'tollgate-coverage-'))
    const config = loadConfig({ TOLLGATE_CONFIG: configWithMissingCredential(directory) })
    const coverage = catalogCoverage(config)
    expect(coverage.servedPerProvider).toEqual({ keyed: 1 })
    expect(coverage.servedModels).toBe(1)
    expect(coverage.servedAliases).toBe(1)
    expect(coverage.hiddenModels).toEqual([
      { model: 'test/orphan', providers: ['unkeyed'], credentials: ['LIFECYCLE_UNSET_KEY'], aliases: ['tollgate/pair', 'tollgate/lost'] },
    ])
    expect(coverage.aliasesWithHiddenTargets).toEqual([
      { alias: 'tollgate/pair', hiddenTargets: ['test/orphan'], served: true },
      { alias: 'tollgate/lost', hiddenTargets: ['test/orphan'], served: false },
    ])
  })

  test('a served model with a route to a provider without its credential: the skipped failover path is a warning', () => {
    const directory = mkdtempSync(join(tmpdir(), 'tollgate-coverage-'))
    const path = configWithMissingCredential(directory)
    const file = JSON.parse(readFileSync(path, 'utf8'))
    file.models[0].routes.push({ provider: 'unkeyed', model: 'kept-elsewhere' })
    writeFileSync(path, JSON.stringify(file))
    const config = loadConfig({ TOLLGATE_CONFIG: path })
    expect(catalogCoverage(config).skippedRoutes).toEqual([{ provider: 'unkeyed', credential: 'LIFECYCLE_UNSET_KEY', models: ['test/kept'] }])
    const warnings = catalogWarnings(config)
    expect(warnings.find((line) => line.fields.provider === 'unkeyed')).toMatchObject({
      level: 'warn',
      fields: { set: 'LIFECYCLE_UNSET_KEY', models: ['test/kept'] },
    })
    // The hidden model is still its own warning; a gateway serving a model has no "no model" alarm.
    expect(warnings.filter((line) => line.fields.model === 'test/orphan')).toHaveLength(1)
    expect(warnings.some((line) => line.message.startsWith('NO MODEL'))).toBe(false)
  })

  test('a Postgres database is described by host, port and name, never by its user or password', () => {
    const described = describeDatabase({ databaseUrl: 'postgres://billing_user:s3cret-pass@db.internal:6543/billing', dataDir: './data' })
    expect(described).toEqual({ engine: 'postgres', host: 'db.internal', port: 6543, name: 'billing' })
    expect(JSON.stringify(described)).not.toContain('s3cret')
    expect(JSON.stringify(described)).not.toContain('billing_user')
  })
})

describe('what the summary says is on', () => {
  const features = (env: Record<string, string>) => {
    const [summary] = startLines({ version: '1.0.0', config: loadConfig(env), listen: 'http://127.0.0.1:8080/' })
    return { features: summary?.fields.features, lease: summary?.fields.credit_lease_credits }
  }

  test('nothing optional set: only the credit lease, at its default size', () => {
    expect(features({})).toEqual({
      features: { console: false, admin_api: false, metrics: false, tracing: false, redis: false, credit_lease: true, request_activity: true },
      lease: 5,
    })
  })

  test('each setting turns its part on, and the lease size is the one set', () => {
    expect(features({ TOLLGATE_METRICS_TOKEN: 'metrics-token-0123456789' }).features).toMatchObject({ console: false, admin_api: false, metrics: true })
    expect(
      features({
        TOLLGATE_ADMIN_TOKEN: 'admin-token-0123456789',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        REDIS_URL: 'redis://127.0.0.1:6379',
        TOLLGATE_CREDIT_LEASE: '2.5',
      }),
    ).toEqual({
      features: { console: true, admin_api: true, metrics: true, tracing: true, redis: true, credit_lease: true, request_activity: true },
      lease: 2.5,
    })
    expect(features({ TOLLGATE_CREDIT_LEASE: '0' })).toMatchObject({ features: { credit_lease: false }, lease: null })
    expect(features({ TOLLGATE_ACTIVITY_RETENTION_DAYS: '0' }).features).toMatchObject({ request_activity: false })
  })
})

describe('start-up summary', () => {
  let gateway: ChildGateway | undefined
  afterEach(() => {
    gateway?.dispose()
    gateway = undefined
  })

  test('a config whose provider has no credential: one summary, a warning per hidden model naming its aliases, one per alias with hidden targets', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'tollgate-lifecycle-'))
    configWithMissingCredential(directory)
    gateway = await ChildGateway.start({ TOLLGATE_CONFIG: 'tollgate.json', TOLLGATE_DATA_DIR: 'embedded' }, directory)
    const summary = await gateway.waitFor((line) => line.message === 'tollgate started')
    expect(summary).toMatchObject({
      level: 'info',
      version: expect.any(String),
      database: { engine: 'embedded', path: 'embedded' },
      config: 'tollgate.json',
      listen: `${gateway.url}/`,
      models: { keyed: 1 },
      models_served: 1,
      aliases_served: 1,
      // The admin token is set (ChildGateway): the console, the admin API and /metrics are on.
      features: { console: true, admin_api: true, metrics: true, tracing: false, redis: false, credit_lease: true, request_activity: true },
      credit_lease_credits: 5,
    })

    const hidden = await gateway.waitFor((line) => line.model === 'test/orphan')
    expect(hidden).toMatchObject({ level: 'warn', providers: ['unkeyed'], set: ['LIFECYCLE_UNSET_KEY'], aliases: ['tollgate/pair', 'tollgate/lost'] })
    expect(hidden.message).toContain('LIFECYCLE_UNSET_KEY')
    expect(await gateway.waitFor((line) => line.alias === 'tollgate/pair')).toMatchObject({ level: 'warn', hidden_targets: ['test/orphan'], served: true })
    expect(await gateway.waitFor((line) => line.alias === 'tollgate/lost')).toMatchObject({ level: 'warn', hidden_targets: ['test/orphan'], served: false })
    // One model is served: no "no model" alarm, and no line quotes the configured key.
    expect(gateway.lines.some((line) => String(line.message).includes('NO MODEL'))).toBe(false)
    expect(gateway.lines.some((line) => JSON.stringify(line).includes('sk-keyed'))).toBe(false)

    // What the warnings say is what the gateway serves.
    const models = (await (await gateway.fetch('/v1/models')).json()) as { data: { id: string }[] }
    expect(models.data.map((model) => model.id).sort()).toEqual(['test/kept', 'tollgate/pair'])
  }, 90_000)

  test('--port and --host beat PORT and HOST; the listening line has its time', async () => {
    const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const port = probe.port
    probe.stop(true)
    gateway = await ChildGateway.start({ PORT: '1', HOST: '0.0.0.0' }, undefined, ['--port', String(port), '--host=127.0.0.1'])
    expect(gateway.url).toBe(`http://127.0.0.1:${port}`)
    const listening = await gateway.waitFor((line) => line.message === 'listening')
    expect(Date.parse(listening.time)).toBeGreaterThan(Date.parse('2020-01-01'))
    expect(listening).toMatchObject({ level: 'info', url: `http://127.0.0.1:${port}/`, database: 'pglite' })
    expect((await gateway.fetch('/v1/healthz')).status).toBe(200)
    expect((await gateway.waitFor((line) => line.message === 'tollgate started')).listen).toBe(`http://127.0.0.1:${port}/`)
    expect(gateway.lines.filter((line) => typeof line.time !== 'string')).toEqual([])
  }, 90_000)

  test('no credential at all with the built-in catalogue: a loud warning that says what to set', async () => {
    gateway = await ChildGateway.start({})
    const summary = await gateway.waitFor((line) => line.message === 'tollgate started')
    expect(summary).toMatchObject({ config: 'built-in catalogue', models: {}, models_served: 0 })
    const alarm = await gateway.waitFor((line) => String(line.message).startsWith('NO MODEL IS SERVED'))
    expect(alarm.level).toBe('warn')
    for (const variable of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'TOLLGATE_CONFIG']) expect(alarm.fix).toContain(variable)
    // The built-in alias has no target left: said too.
    expect(await gateway.waitFor((line) => line.alias === 'tollgate/smart')).toMatchObject({ level: 'warn', served: false })
    const models = (await (await gateway.fetch('/v1/models')).json()) as { data: unknown[] }
    expect(models.data).toEqual([])
  }, 90_000)
})
