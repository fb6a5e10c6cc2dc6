import { beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'
import { mockCatalog } from '../support/mock-catalog'
import type { MockUpstream } from '../upstream/mock-upstream'

const JOB_TIMEOUT_MS = 1000

/** The mock catalogue with short job deadlines, and a family A model with lengths of its own. */
function catalogEnv(upstream: MockUpstream): Record<string, string> {
  const catalog = mockCatalog(upstream.baseUrl, upstream.baseUrl) as any
  catalog.providers.a.jobTimeoutMs = JOB_TIMEOUT_MS
  catalog.providers.veo.jobTimeoutMs = JOB_TIMEOUT_MS
  catalog.models.push({
    id: 'google/veo-long',
    type: 'video',
    videoFamily: 'A',
    videoDurations: [5, 10],
    routes: [{ provider: 'veo', model: 'veo-long-001' }],
    pricing: { videoSecond: 0.4 },
  })
  const path = join(mkdtempSync(join(tmpdir(), 'tollgate-catalog-')), 'tollgate.json')
  writeFileSync(path, JSON.stringify(catalog))
  return { TOLLGATE_CONFIG: path }
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time')
    await Bun.sleep(20)
  }
}

/**
 * Long-running video jobs (`jobTimeoutMs`, docs/configuration.md#video-models; docs/billing.md#what-each-endpoint-is-billed-on): a job past its deadline is a 504
 * and not billed, and cancelled upstream where the API allows; a client that leaves has its
 * job cancelled where the API allows (released), else followed to its end and billed.
 */
for (const kind of testDatabases) {
  describe(`video jobs: deadlines and clients that leave (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { env: ({ upstream }) => catalogEnv(upstream) })
    const upstream = suite.upstream
    beforeEach(() => upstream.reset())

    const generate = (key: string, body: object) => suite.harness.call('POST', '/v1/videos/generations', { headers: bearer(key), body })
    const wallet = async (accountId: string) => (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
    const ledger = async (keyId: string) => (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as any[]
    const requests = (method: string, pattern: RegExp) => upstream.received.filter((request) => request.method === method && pattern.test(request.path))
    const veoPolls = () => requests('POST', /:fetchPredictOperation$/).length
    const soraPolls = () => requests('GET', /^\/v1\/videos\/[^/]+$/).length

    /** Sends a generation and leaves after `leaveAfterMs`; the gateway's answer (to nobody) is returned. */
    function generateAndLeave(key: string, body: object, leaveAfterMs: number): Promise<Response | undefined> {
      const client = new AbortController()
      setTimeout(() => client.abort(), leaveAfterMs)
      return suite.harness.gateway
        .handle(
          new Request('http://localhost/v1/videos/generations', {
            method: 'POST',
            headers: { ...bearer(key), 'content-type': 'application/json' },
            body: JSON.stringify(body),
            signal: client.signal,
          }),
        )
        .catch(() => undefined)
    }

    test('deadline, OpenAI videos: 504 upstream_timeout, nothing charged, the job deleted upstream, polling stopped', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      upstream.script({ kind: 'video', neverFinishes: true })
      const started = Date.now()
      expectError(await generate(key, { model: 'test/sora', prompt: 'forever' }), 504, 'upstream_timeout')
      expect(Date.now() - started).toBeGreaterThanOrEqual(JOB_TIMEOUT_MS - 20)
      await eventually(() => requests('DELETE', /^\/v1\/videos\//).length === 1)
      const [submitted] = requests('POST', /^\/v1\/videos$/)
      expect(submitted).toBeDefined()
      expect(upstream.videos.cancelled).toHaveLength(1)
      expect(requests('DELETE', /^\/v1\/videos\//)[0]!.path).toBe(`/v1/videos/${upstream.videos.cancelled[0]}`)
      expect(await wallet(accountId)).toEqual({ balance: 100, held: 0, available: 100 })
      expect((await ledger(keyId)).map((entry) => entry.kind)).toEqual(['release', 'hold'])
      const polls = soraPolls()
      await Bun.sleep(100)
      expect(soraPolls()).toBe(polls)
      await expectBooksBalance(suite.database.db)
    })

    test('deadline, Veo: 504 upstream_timeout, nothing charged, polling stopped (Vertex has no cancel)', async () => {
      const { key, accountId } = await suite.harness.key()
      upstream.script({ kind: 'video', neverFinishes: true })
      expectError(await generate(key, { model: 'google/veo-test', prompt: 'forever' }), 504, 'upstream_timeout')
      expect(await wallet(accountId)).toEqual({ balance: 100, held: 0, available: 100 })
      const polls = veoPolls()
      expect(polls).toBeGreaterThan(1)
      await Bun.sleep(100)
      expect(veoPolls()).toBe(polls)
      expect(upstream.received.filter((request) => request.method === 'DELETE')).toHaveLength(0)
      await expectBooksBalance(suite.database.db)
    })

    test('client leaves, OpenAI videos: the job is deleted upstream, the hold released, polling stopped', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      upstream.script({ kind: 'video', readyAfterMs: 60_000 })
      const answered = generateAndLeave(key, { model: 'test/sora', prompt: 'never mind' }, 150)
      expect((await answered)?.status ?? 499).toBe(499)
      await eventually(async () => (await wallet(accountId)).held === 0)
      expect(upstream.videos.cancelled).toHaveLength(1)
      expect(requests('DELETE', /^\/v1\/videos\//)).toHaveLength(1)
      expect(await wallet(accountId)).toEqual({ balance: 100, held: 0, available: 100 })
      expect((await ledger(keyId)).map((entry) => entry.kind)).toEqual(['release', 'hold'])
      // A poll already on the wire may still land; after that, none.
      await Bun.sleep(50)
      const polls = soraPolls()
      await Bun.sleep(100)
      expect(soraPolls()).toBe(polls)
      await expectBooksBalance(suite.database.db)
    })

    test('client leaves, OpenAI videos, the API refuses the delete: the job is followed to its end and billed', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      upstream.script({ kind: 'video', readyAfterMs: 500, refuseCancel: true })
      const answered = generateAndLeave(key, { model: 'test/sora', prompt: 'keep going', seconds: 4 }, 150)
      await answered
      await eventually(async () => (await ledger(keyId)).some((entry) => entry.kind === 'charge'))
      expect(requests('DELETE', /^\/v1\/videos\//)).toHaveLength(1)
      expect(upstream.videos.cancelled).toHaveLength(0)
      expect((await ledger(keyId)).find((entry) => entry.kind === 'charge')).toMatchObject({ amount: 0.4, usage: { video_seconds: 4, source: 'provider' } })
      expect(await wallet(accountId)).toEqual({ balance: 99.6, held: 0, available: 99.6 })
      await expectBooksBalance(suite.database.db)
    })

    test('client leaves, Veo: the job is followed to its end after the client left and billed for its seconds', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      upstream.script({ kind: 'video', readyAfterMs: 500 })
      const answered = generateAndLeave(key, { model: 'google/veo-test', prompt: 'keep going', duration_seconds: 6 }, 150)
      await Bun.sleep(250)
      // The client is gone, the job runs on: the hold stays and the polls go on.
      expect((await wallet(accountId)).held).toBeGreaterThan(0)
      const pollsWhenLeft = veoPolls()
      await answered
      await eventually(async () => (await ledger(keyId)).some((entry) => entry.kind === 'charge'))
      expect(veoPolls()).toBeGreaterThan(pollsWhenLeft)
      expect((await ledger(keyId)).find((entry) => entry.kind === 'charge')).toMatchObject({ amount: 2.4, usage: { video_seconds: 6, source: 'requested' } })
      expect(await wallet(accountId)).toEqual({ balance: 97.6, held: 0, available: 97.6 })
      expect(upstream.received.filter((request) => request.method === 'DELETE')).toHaveLength(0)
      await expectBooksBalance(suite.database.db)
    })

    test('client leaves, Veo: a followed job that fails, is blocked or runs past its deadline is released', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      upstream.script(
        { kind: 'video', readyAfterMs: 400, result: 'failed' },
        { kind: 'video', readyAfterMs: 400, result: 'blocked' },
        { kind: 'video', neverFinishes: true },
      )
      const followed = [
        generateAndLeave(key, { model: 'google/veo-test', prompt: 'fails' }, 100),
        generateAndLeave(key, { model: 'google/veo-test', prompt: 'blocked' }, 100),
        generateAndLeave(key, { model: 'google/veo-test', prompt: 'forever' }, 100),
      ]
      await Promise.all(followed)
      await eventually(async () => (await ledger(keyId)).filter((entry) => entry.kind === 'release').length === 3)
      expect((await ledger(keyId)).filter((entry) => entry.kind === 'charge')).toHaveLength(0)
      expect(await wallet(accountId)).toEqual({ balance: 100, held: 0, available: 100 })
      await expectBooksBalance(suite.database.db)
    })

    test('duration bounds: each bad value is a 400 naming the field, before any hold or upstream call', async () => {
      const { key, id: keyId } = await suite.harness.key()
      const checks: [object, string][] = [
        [{ model: 'google/veo-test', duration_seconds: 5 }, 'duration_seconds'],
        [{ model: 'google/veo-test', duration_seconds: 6.5 }, 'duration_seconds'],
        [{ model: 'google/veo-test', duration_seconds: 12 }, 'duration_seconds'],
        [{ model: 'google/veo-test', duration_seconds: 1e20 }, 'duration_seconds'],
        [{ model: 'google/veo-test', duration_seconds: -4 }, 'duration_seconds'],
        [{ model: 'google/veo-test', duration_seconds: 0 }, 'duration_seconds'],
        [{ model: 'google/veo-test', duration_seconds: 'NaN' }, 'duration_seconds'],
        [{ model: 'google/veo-test', duration_seconds: 'abc' }, 'duration_seconds'],
        [{ model: 'google/veo-test', duration_seconds: '100000000000000000000' }, 'duration_seconds'],
        [{ model: 'google/veo-test', duration_seconds: true }, 'duration_seconds'],
        [{ model: 'google/veo-test', seconds: 1e20 }, 'seconds'],
        [{ model: 'google/veo-long', duration_seconds: 8 }, 'duration_seconds'],
        [{ model: 'test/sora', duration_seconds: -1 }, 'duration_seconds'],
        [{ model: 'test/sora', duration_seconds: 0 }, 'duration_seconds'],
        [{ model: 'test/sora', seconds: 'twelve' }, 'seconds'],
        [{ model: 'test/sora', seconds: [8] }, 'seconds'],
      ]
      for (const [body, param] of checks) {
        const reply = await generate(key, { prompt: 'x', ...body })
        expectError(reply, 400, 'invalid_request')
        expect({ body, param: reply.json.error.param }).toEqual({ body, param })
      }
      expect(upstream.received).toHaveLength(0)
      expect(await ledger(keyId)).toEqual([])
    })

    test("duration bounds: allowed lengths pass; a model's own list replaces Veo's; family B still snaps", async () => {
      const { key, id: keyId } = await suite.harness.key()
      const accepted: [object, number][] = [
        [{ model: 'google/veo-test', duration_seconds: 4 }, 4],
        [{ model: 'google/veo-test', seconds: '6' }, 6],
        [{ model: 'google/veo-test' }, 8],
        [{ model: 'google/veo-long', duration_seconds: 5 }, 5],
        // Without 8 among its lengths, the default is the model's longest.
        [{ model: 'google/veo-long' }, 10],
        [{ model: 'test/sora', duration_seconds: 20 }, 12],
        // docs/api.md#videos: above 12 is 12, however far above.
        [{ model: 'test/sora', duration_seconds: 1e20 }, 12],
      ]
      for (const [body, seconds] of accepted) {
        upstream.script({ kind: 'video' })
        const reply = await generate(key, { prompt: 'x', ...body })
        expect(reply.status).toBe(200)
        expect(reply.json.usage.video_seconds).toBe(seconds)
      }
      expect(requests('POST', /:predictLongRunning$/).map((request) => request.body.parameters.durationSeconds)).toEqual([4, 6, 8, 5, 10])
      expect((await ledger(keyId)).filter((entry) => entry.kind === 'charge')).toHaveLength(accepted.length)
      await expectBooksBalance(suite.database.db)
    })
  })
}
