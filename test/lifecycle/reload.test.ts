import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MockUpstream } from '../upstream/mock-upstream'
import { ChildGateway, chat } from './child-gateway'

/**
 * SIGHUP (docs/operations.md#reload): a valid config file takes over for new requests (a new
 * model is listed, a new price charged) while a stream started before keeps its price; an
 * invalid one is refused with the bad field named, and the running config serves on.
 */
describe('reload on SIGHUP', () => {
  const upstream = new MockUpstream()
  let gateway: ChildGateway | undefined
  let workdir: string
  /** The file a start finds by itself: ./tollgate.json in its working directory. */
  const configPath = () => join(workdir, 'tollgate.json')

  const catalogue = (price: number, extraModel?: string) => ({
    providers: { up: { api: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-upstream', responsesApi: false } },
    models: [
      { id: 'test/cheap', type: 'chat', routes: [{ provider: 'up', model: 'cheap' }], pricing: { input: price, output: price }, maxOutputTokens: 1000 },
      ...(extraModel ? [{ id: extraModel, type: 'chat', routes: [{ provider: 'up', model: 'new' }], pricing: { input: 1, output: 1 } }] : []),
    ],
  })

  beforeAll(() => {
    upstream.start()
    workdir = mkdtempSync(join(tmpdir(), 'tollgate-reload-'))
    writeFileSync(configPath(), JSON.stringify(catalogue(1000)))
  })
  afterAll(() => {
    upstream.stop()
    gateway?.dispose()
    rmSync(workdir, { recursive: true, force: true })
  })

  const modelIds = async () => {
    if (!gateway) throw new Error('no gateway')
    const list = (await (await gateway.fetch('/v1/models')).json()) as { data: { id: string }[] }
    return list.data.map((model) => model.id).sort()
  }
  const reloads = () => gateway?.lines.filter((line) => String(line.message).startsWith('config reload')).length ?? 0

  test('a valid file takes over for new requests; a stream already running keeps its price', async () => {
    gateway = await ChildGateway.start({}, workdir)
    const started = gateway
    const { key } = await started.fundedKey(10)
    const post = (body: string) =>
      started.fetch('/v1/chat/completions', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body })
    expect(await modelIds()).toEqual(['test/cheap'])

    // A stream that starts at the old price and ends after the reload.
    upstream.script({ text: 'one two three four', chunkDelayMs: 300, usage: { prompt_tokens: 10, completion_tokens: 10 } })
    const streamed = await post(chat('test/cheap', true))
    const reader = streamed.body?.getReader()
    if (!reader) throw new Error('no body')
    await reader.read()

    writeFileSync(configPath(), JSON.stringify(catalogue(3000, 'test/new')))
    const before = reloads()
    started.signal('SIGHUP')
    const reloaded = await started.waitFor((line) => line.message === 'config reloaded: new requests use it')
    expect(reloaded).toMatchObject({ level: 'info', config: './tollgate.json', added: ['test/new'], removed: [], models_served: 2 })
    expect(reloads()).toBe(before + 1)
    expect(await modelIds()).toEqual(['test/cheap', 'test/new'])
    const pricing = (await (await started.fetch('/v1/pricing', { headers: { authorization: `Bearer ${key}` } })).json()) as {
      data: { model: string; input: number }[]
    }
    expect(pricing.data.find((entry) => entry.model === 'test/cheap')?.input).toBe(3000)

    // A new call is charged at the new price: 20 tokens at 3000 per million.
    upstream.script({ text: 'after', usage: { prompt_tokens: 10, completion_tokens: 10 } })
    const after = await post(chat('test/cheap'))
    expect(after.status).toBe(200)
    while (!(await reader.read()).done) {}
    // The stream, started before, at the old one: 20 tokens at 1000 per million. 10 - 0.06 - 0.02.
    const wallet = (await (await started.fetch('/v1/wallet', { headers: { authorization: `Bearer ${key}` } })).json()) as { balance: number }
    expect(wallet.balance).toBe(9.92)
  }, 120_000)

  test('an invalid file is refused with the field named, and the running config serves on', async () => {
    const started = gateway
    if (!started) throw new Error('the first test starts the gateway')
    const broken = catalogue(3000, 'test/new')
    writeFileSync(configPath(), JSON.stringify({ ...broken, models: [{ ...broken.models[0], pricing: { input: 'cheap', output: 1 } }] }))
    started.signal('SIGHUP')
    const refused = await started.waitFor((line) => String(line.message).startsWith('config reload refused'))
    expect(refused.level).toBe('error')
    expect(refused.error).toContain('./tollgate.json: models[0].pricing.input')
    expect(await modelIds()).toEqual(['test/cheap', 'test/new'])

    // Not JSON at all: refused the same way.
    writeFileSync(configPath(), '{ "providers": ')
    started.signal('SIGHUP')
    await started.waitFor((line) => String(line.message).startsWith('config reload refused') && String(line.error).includes('not valid JSON'))
    expect(await modelIds()).toEqual(['test/cheap', 'test/new'])
    expect((await started.fetch('/v1/readyz')).status).toBe(200)
  }, 60_000)
})
