import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type FreshDatabase, testDatabases } from '../support/databases'
import { MockUpstream } from '../upstream/mock-upstream'
import { ADMIN_TOKEN, ChildGateway, chat, type LogLine, readRest, writeLifecycleCatalog } from './child-gateway'

/**
 * `serve --workers N` (docs/operations.md#workers): N processes on one port behind a primary.
 * Several workers need Postgres (the embedded database is single-process), so those cases run
 * only when DATABASE_URL names a server; the refusals run everywhere.
 */
const postgres = testDatabases.find((candidate) => candidate.kind === 'postgres')
/** A chat call of 10 input and 8 output tokens at 1000 / 2000 credits per million. */
const CALL_COST = 0.026

describe('serve --workers N', () => {
  const upstream = new MockUpstream()
  let gateway: ChildGateway | undefined
  let database: FreshDatabase | undefined
  let configPath: string

  beforeAll(() => {
    upstream.start()
    configPath = writeLifecycleCatalog(upstream.baseUrl)
  })
  afterAll(() => upstream.stop())
  afterEach(async () => {
    gateway?.dispose()
    gateway = undefined
    upstream.reset()
    await database?.close()
    database = undefined
  })

  async function startWorkers(env: Record<string, string> = {}): Promise<ChildGateway> {
    if (!postgres) throw new Error('no Postgres')
    database = await postgres.open({ migrated: false })
    gateway = await ChildGateway.start({
      TOLLGATE_CONFIG: configPath,
      DATABASE_URL: database.url ?? '',
      TOLLGATE_WORKERS: '2',
      TOLLGATE_DRAIN_SECONDS: '0',
      ...env,
    })
    return gateway
  }

  /** A request on a connection of its own: the kernel picks the worker per connection. */
  const post = (target: ChildGateway, key: string, body: string) =>
    target.fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
      body,
      keepalive: false,
    })

  const chatLines = (target: ChildGateway) => target.lines.filter((line) => line.route === '/v1/chat/completions' && line.pid !== undefined)

  async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('condition not met in time')
      await Bun.sleep(50)
    }
  }

  test.skipIf(!postgres)(
    'two workers: one listening line, both serve, every call billed once, /metrics sums both',
    async () => {
      const target = await startWorkers()
      const { key, accountId } = await target.fundedKey(1000)
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 8 } })
      const calls = 20
      const statuses = await Promise.all(Array.from({ length: calls }, () => post(target, key, chat('test/cheap')).then((response) => response.status)))
      expect(statuses).toEqual(Array(calls).fill(200))

      await waitUntil(() => chatLines(target).length === calls)
      expect(new Set(chatLines(target).map((line) => line.pid)).size).toBe(2)
      expect(new Set(chatLines(target).map((line) => line.worker))).toEqual(new Set([1, 2]))
      expect(target.lines.filter((line) => line.message === 'listening')).toHaveLength(1)
      expect(target.lines.filter((line) => line.message === 'tollgate started')).toHaveLength(1)
      // Every line is JSON with its time; a worker's event lines name it (its slot and pid), as its request lines do.
      expect(target.lines.filter((line) => typeof line.time !== 'string')).toEqual([])
      const connected = target.lines.filter((line) => String(line.message).startsWith('database connected'))
      expect(connected.map((line) => String(line.worker ?? 'primary')).sort()).toEqual(['1', '2', 'primary'])
      for (const line of connected.filter((each) => each.worker !== undefined)) expect(line.pid).toEqual(expect.any(Number))

      // Each worker's credit lease is given back within 2 s of the wallet's last call (docs/billing.md#credit-lease).
      let wallet = (await target.admin('GET', `/accounts/${accountId}`)).wallet
      await waitUntil(async () => {
        wallet = (await target.admin('GET', `/accounts/${accountId}`)).wallet
        return wallet.held === 0
      }, 3_000)
      expect(wallet.balance).toBeCloseTo(1000 - calls * CALL_COST, 9)

      const metrics = await (await target.fetch('/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text()
      expect(sampleSum(metrics, 'tollgate_requests_total{route="/v1/chat/completions"')).toBe(calls)
      expect(sampleSum(metrics, 'tollgate_credits_charged_total{')).toBeCloseTo(calls * CALL_COST, 9)
      expect(sampleSum(metrics, 'tollgate_workers_reporting')).toBe(2)
      expect(sampleSum(metrics, 'tollgate_workers ')).toBe(2)
    },
    90_000,
  )

  test.skipIf(!postgres)(
    'a killed worker is restarted and serves again; its open holds are expired by the sweep',
    async () => {
      const target = await startWorkers({ TOLLGATE_HOLD_TTL_SECONDS: '1' })
      const { key, accountId } = await target.fundedKey(1000)
      const started = target.lines.filter((line) => line.message === 'worker started')
      expect(started).toHaveLength(2)

      // Streams in flight on both workers (the kernel spreads connections): each waits 400 ms between words.
      upstream.always({ text: 'one two three four five six seven eight', chunkDelayMs: 400, usage: { prompt_tokens: 10, completion_tokens: 8 } })
      const ended: string[] = []
      const streams = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const response = await post(target, key, chat('test/cheap', true))
          expect(response.status).toBe(200)
          const reader = response.body?.getReader()
          if (!reader) throw new Error('no body')
          await reader.read()
          // Wrapped: an async function returning the promise itself would wait for the stream's end.
          return {
            outcome: (async () => {
              // A stream whose worker died ends (or fails) without its closing [DONE] event.
              const text = await readRest(reader).catch(() => '')
              const outcome = text.includes('[DONE]') ? 'finished' : 'cut'
              ended.push(outcome)
              return outcome
            })(),
          }
        }),
      )
      // Kill worker 1; if no stream went through it, worker 2 as well, so some hold is left open.
      // A whole stream takes 3.2 s, well after the last kill (at most a second after the first).
      const killed: LogLine[] = []
      for (const victim of started) {
        process.kill(victim.pid, 'SIGKILL')
        killed.push(victim)
        for (let waited = 0; !ended.includes('cut') && waited < 1000; waited += 10) await Bun.sleep(10)
        if (ended.includes('cut')) break
      }
      const outcomes = await Promise.all(streams.map((stream) => stream.outcome))
      const cut = outcomes.filter((outcome) => outcome === 'cut').length
      expect(cut).toBeGreaterThan(0)

      // The primary restarts what it lost, and the new processes serve.
      for (const victim of killed) {
        await target.waitFor((line) => line.message === 'worker died: restarting it; its open holds lapse to the sweep' && line.pid === victim.pid)
      }
      await waitUntil(() => target.lines.filter((line) => line.message === 'worker listening again').length === killed.length)
      const replacements = target.lines.filter((line) => line.message === 'worker started').slice(2)
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 8 } })
      let served = 0
      await waitUntil(async () => {
        expect((await post(target, key, chat('test/cheap'))).status).toBe(200)
        served += 1
        const pids = new Set(chatLines(target).map((line) => line.pid))
        return replacements.every((line) => pids.has(line.pid))
      })

      // The killed worker's holds lapse after their TTL: given back, never charged.
      let wallet = (await target.admin('GET', `/accounts/${accountId}`)).wallet
      await waitUntil(async () => {
        wallet = (await target.admin('GET', `/accounts/${accountId}`)).wallet
        return wallet.held === 0
      })
      const finished = outcomes.length - cut
      expect(wallet.balance).toBeCloseTo(1000 - (finished + served) * CALL_COST, 9)
      // What the killed workers held (their leases, the default) was expired, and every hold is accounted for.
      const entries = (await target.admin('GET', `/ledger?account_id=${accountId}&limit=200`)).data as { kind: string; amount: number }[]
      expect(entries.filter((entry) => entry.kind === 'expire').length).toBeGreaterThan(0)
      const sum = (kinds: string[]) => entries.filter((entry) => kinds.includes(entry.kind)).reduce((total, entry) => total + entry.amount, 0)
      expect(sum(['charge', 'release', 'expire'])).toBeCloseTo(sum(['hold']), 9)
    },
    120_000,
  )

  test.skipIf(!postgres)(
    'SIGHUP reaches every worker; SIGTERM drains every worker and the primary exits 0',
    async () => {
      const target = await startWorkers()
      target.signal('SIGHUP')
      await waitUntil(() => target.lines.filter((line) => line.message === 'config reloaded: new requests use it').length === 2)

      const { key } = await target.fundedKey(1000)
      upstream.always({ text: 'one two three', chunkDelayMs: 300, usage: { prompt_tokens: 10, completion_tokens: 8 } })
      const streamed = await post(target, key, chat('test/cheap', true))
      const reader = streamed.body?.getReader()
      if (!reader) throw new Error('no body')
      await reader.read()
      target.signal('SIGTERM')
      expect(await readRest(reader)).toContain('[DONE]')
      expect(await target.child.exited).toBe(0)
      expect(target.lines.filter((line) => line.message === 'draining: /v1/readyz answers 503, requests are still served')).toHaveLength(2)
      // Two workers' exits and then the primary's (which names how many workers it ran).
      expect(target.lines.filter((line) => line.message === 'exit' && line.code === 0 && line.workers === undefined)).toHaveLength(2)
      expect(target.lines.filter((line) => line.message === 'exit').at(-1)).toMatchObject({ code: 0, workers: 2 })
      expect(target.lines.filter((line) => line.message === 'worker died: restarting it; its open holds lapse to the sweep')).toHaveLength(0)
    },
    90_000,
  )

  test.skipIf(!postgres)(
    'a restarted worker runs the config that last loaded, not the file broken on disk since',
    async () => {
      // A file of this test's own, first as the suite's, then with one model more.
      const ownConfig = writeLifecycleCatalog(upstream.baseUrl)
      const target = await startWorkers({ TOLLGATE_CONFIG: ownConfig })
      const { key } = await target.fundedKey(1000)
      const withNewModel = JSON.parse(await Bun.file(ownConfig).text())
      withNewModel.models.push({ id: 'test/new', type: 'chat', routes: [{ provider: 'up', model: 'new' }], pricing: { input: 1, output: 1 } })
      await Bun.write(ownConfig, JSON.stringify(withNewModel))
      target.signal('SIGHUP')
      const reloaded = () => target.lines.filter((line) => line.message === 'config reloaded: new requests use it').length
      await waitUntil(() => reloaded() === 2)

      // Broken on disk: refused once, by the primary, and no worker reloads.
      await Bun.write(ownConfig, '{"providers": {}, "models": [{"id": 42}]}')
      target.signal('SIGHUP')
      await target.waitFor((line) => String(line.message).startsWith('config reload refused, the running config stays'))
      await Bun.sleep(500)
      expect(target.lines.filter((line) => String(line.message).startsWith('config reload refused'))).toHaveLength(1)
      expect(reloaded()).toBe(2)

      // A worker dies: its replacement starts from the config that last loaded, and serves it.
      const [victim] = target.lines.filter((line) => line.message === 'worker started')
      if (!victim) throw new Error('no worker')
      process.kill(victim.pid, 'SIGKILL')
      await target.waitFor((line) => line.message === 'worker listening again', 30_000)
      const replacement = target.lines.filter((line) => line.message === 'worker started').at(-1)
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 8 } })
      await waitUntil(async () => {
        expect((await post(target, key, chat('test/new'))).status).toBe(200)
        return chatLines(target).some((line) => line.pid === replacement?.pid)
      })
      expect(target.lines.filter((line) => String(line.message).includes('stopping the instance'))).toHaveLength(0)

      // SIGHUP sent to one worker reloads the whole instance from the file, once it loads again.
      await Bun.write(ownConfig, JSON.stringify(withNewModel))
      process.kill(Number(replacement?.pid), 'SIGHUP')
      await target.waitFor((line) => line.message === 'config loaded: every worker reloads it' && line.why === 'a worker got SIGHUP')
      await waitUntil(() => reloaded() === 4)
    },
    120_000,
  )

  test.skipIf(!postgres)(
    'workers do not outlive a primary killed outright',
    async () => {
      const target = await startWorkers()
      const pids = target.lines.filter((line) => line.message === 'worker started').map((line) => Number(line.pid))
      expect(pids).toHaveLength(2)
      target.signal('SIGKILL')
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0)
          return true
        } catch {
          return false
        }
      }
      await waitUntil(() => !pids.some(alive), 10_000)
      expect(target.lines.filter((line) => String(line.message).startsWith('the primary process is gone'))).toHaveLength(2)
    },
    60_000,
  )

  test.skipIf(!postgres)(
    'a per-minute request limit holds across both workers without Redis',
    async () => {
      const target = await startWorkers()
      const account = await target.admin('POST', '/accounts', { name: 'limited' })
      await target.admin('POST', `/accounts/${account.id}/credits`, { amount: 100 })
      const { key } = await target.admin('POST', '/keys', { account_id: account.id, env: 'prod', rpm: 5 })
      upstream.always({ usage: { prompt_tokens: 10, completion_tokens: 8 } })
      const statuses = await Promise.all(Array.from({ length: 12 }, () => post(target, key, chat('test/cheap')).then((response) => response.status)))
      expect(statuses.filter((status) => status === 200)).toHaveLength(5)
      expect(statuses.filter((status) => status === 429)).toHaveLength(7)
      // Both workers answered some of them: the limit was counted in one place, not per worker.
      await waitUntil(() => target.lines.filter((line) => line.route === '/v1/chat/completions').length === 12)
      expect(new Set(target.lines.filter((line) => line.route === '/v1/chat/completions').map((line) => line.worker)).size).toBe(2)
    },
    90_000,
  )
})

describe('serve --workers N refusals', () => {
  const main = resolve('src/main.ts')
  const refusal = (env: Record<string, string>, args: string[] = []) => {
    const run = Bun.spawnSync(['bun', main, 'serve', ...args], {
      cwd: mkdtempSync(join(tmpdir(), 'tollgate-workers-refused-')),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', ...env },
    })
    return { code: run.exitCode, stderr: run.stderr.toString() }
  }

  test('the embedded database refuses several workers, naming the setting', () => {
    const fromEnv = refusal({ TOLLGATE_WORKERS: '2' })
    expect(fromEnv.code).toBe(1)
    expect(fromEnv.stderr).toContain('config error: TOLLGATE_WORKERS=2: the embedded database is single-process')
    const fromFlag = refusal({}, ['--workers', '3'])
    expect(fromFlag.code).toBe(1)
    expect(fromFlag.stderr).toContain('config error: --workers=3: the embedded database is single-process')
  })

  test('a count that is not a whole number from 1 to 256 is refused, naming the setting', () => {
    for (const value of ['0', 'two', '1.5', '257', '-1']) {
      const run = refusal({ TOLLGATE_WORKERS: value, DATABASE_URL: 'postgres://127.0.0.1:1/none' })
      expect(run.code).toBe(1)
      expect(run.stderr).toContain('config error: TOLLGATE_WORKERS must be a whole number from 1 to 256')
    }
    const flag = refusal({ DATABASE_URL: 'postgres://127.0.0.1:1/none' }, ['--workers=0'])
    expect(flag.stderr).toContain('config error: --workers must be a whole number from 1 to 256')
    // Six processes started one after the other: on a busy machine, more than the default 5 s.
  }, 30_000)
})

/** The sum of the samples whose line starts with `prefix` (a name, and the opening of its labels). */
function sampleSum(exposition: string, prefix: string): number {
  return exposition
    .split('\n')
    .filter((line) => line.startsWith(prefix))
    .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)
}
