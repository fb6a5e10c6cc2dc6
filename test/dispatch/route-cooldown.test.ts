import { afterEach, beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { type Exposition, parseExposition, sampleValue } from '../support/exposition'
import { ADMIN_TOKEN, bearer, type TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { mockCatalogEnv } from '../support/mock-catalog'
import type { MockUpstream } from '../upstream/mock-upstream'
import type { Script } from '../upstream/scripts'

const hi = [{ role: 'user', content: 'Say hi.' }]
const unavailable: Script = { kind: 'error', status: 503 }
const tooMany = (retryAfter: string): Script => ({ kind: 'error', status: 429, headers: { 'retry-after': retryAfter } })

/**
 * Route cooldowns (docs/configuration.md#route-cooldown): a route that failed 3 times in a row
 * is skipped for its provider's cooldownSeconds (or a 429's Retry-After) while its model has
 * another route; then one trial call goes to it. Each test starts a gateway of its own (its
 * cooldowns are its process's state) on a clock the test moves, so no test waits 30 s.
 */
for (const kind of testDatabases) {
  describe(`route cooldown (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { secondUpstream: true, gateway: false })
    let shiftMs = 0
    const now = () => Date.now() + shiftMs
    let lines: string[] = []
    let spy: ReturnType<typeof spyOn> | undefined
    beforeEach(() => {
      suite.upstream.reset()
      suite.secondUpstream.reset()
      shiftMs = 0
      lines = []
      spy = spyOn(console, 'error').mockImplementation((line: unknown) => lines.push(String(line)))
    })
    afterEach(() => spy?.mockRestore())

    /** A gateway of the test's own, on the moving clock, with `settings` added to named providers. */
    const gateway = (settings: Record<string, Record<string, unknown>> = {}) =>
      suite.instance({ now, env: mockCatalogEnv(suite.upstream.baseUrl, suite.secondUpstream.baseUrl, settings) })
    const caller = async (harness: TestGateway) => {
      const { key } = await harness.key()
      return (model: string) => harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model, messages: hi, max_tokens: 50 } })
    }
    /** Requests the mock received for one upstream model. */
    const received = (upstream: MockUpstream, model: string) => upstream.received.filter((request) => request.body?.model === model).length
    /** The operational events with this message, parsed. */
    const events = (message: string) =>
      lines
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line))
        .filter((event) => event.message === message)
    const cooling = async (harness: TestGateway) => {
      const reply = await harness.call('GET', '/metrics', { headers: bearer(ADMIN_TOKEN) })
      expect(reply.status).toBe(200)
      const exposition: Exposition = parseExposition(reply.text)
      expect(exposition.types.get('tollgate_routes_cooling_down')).toBe('gauge')
      return sampleValue(exposition, 'tollgate_routes_cooling_down')
    }

    test('a route that answered 503 three times is skipped for cooldownSeconds, then tried once; a failed trial cools it again, a good one clears it', async () => {
      const harness = gateway()
      const chat = await caller(harness)
      suite.upstream.always(unavailable)
      for (let call = 1; call <= 3; call++) expect((await chat('test/smart')).status).toBe(200)
      expect(received(suite.upstream, 'smart-a')).toBe(3)
      expect(received(suite.secondUpstream, 'smart-b')).toBe(3)
      expect(events('route cooling down')).toMatchObject([
        { level: 'warn', provider: 'a', upstream_model: 'smart-a', cooldown_seconds: 30, reason: 'http_503' },
      ])
      expect(await cooling(harness)).toBe(1)

      // Within the cooldown the dead route is not called at all.
      for (let call = 1; call <= 3; call++) expect((await chat('test/smart')).status).toBe(200)
      shiftMs = 29_000
      expect((await chat('test/smart')).status).toBe(200)
      expect(received(suite.upstream, 'smart-a')).toBe(3)
      expect(received(suite.secondUpstream, 'smart-b')).toBe(7)
      expect(events('route cooldown ended')).toEqual([])

      // After it: one trial call, which fails and starts a new cooldown at once.
      shiftMs = 30_500
      expect((await chat('test/smart')).status).toBe(200)
      expect(received(suite.upstream, 'smart-a')).toBe(4)
      expect(events('route cooldown ended')).toMatchObject([{ level: 'info', provider: 'a', upstream_model: 'smart-a', reason: 'elapsed' }])
      expect(events('route cooling down')).toHaveLength(2)
      expect((await chat('test/smart')).status).toBe(200)
      expect(received(suite.upstream, 'smart-a')).toBe(4)
      expect(await cooling(harness)).toBe(1)

      // The next trial succeeds: the route serves again, from its first failure on.
      suite.upstream.always({})
      shiftMs = 61_000
      expect((await chat('test/smart')).status).toBe(200)
      expect(received(suite.upstream, 'smart-a')).toBe(5)
      expect(await cooling(harness)).toBe(0)
      suite.upstream.script(unavailable)
      expect((await chat('test/smart')).status).toBe(200)
      expect((await chat('test/smart')).status).toBe(200)
      expect(received(suite.upstream, 'smart-a')).toBe(7)
      expect(events('route cooling down')).toHaveLength(2)
    })

    test('a route whose connection is refused is left out after 3 calls: the later calls make one attempt', async () => {
      const harness = gateway()
      const chat = await caller(harness)
      const attemptsOf = async (reply: { headers: Headers }) => {
        const requestId = reply.headers.get('x-request-id')
        const line = harness.logs.map((text) => JSON.parse(text)).find((entry) => entry.request_id === requestId)
        return line?.attempts.map(
          (attempt: { provider: string; status?: number; reason?: string }) => `${attempt.provider} ${attempt.status ?? attempt.reason}`,
        )
      }
      for (let call = 1; call <= 3; call++) expect(await attemptsOf(await chat('test/fragile'))).toEqual(['dead unreachable', 'b 200'])
      expect(events('route cooling down')).toMatchObject([{ provider: 'dead', upstream_model: 'x', reason: 'unreachable', cooldown_seconds: 30 }])
      expect(await attemptsOf(await chat('test/fragile'))).toEqual(['b 200'])
      shiftMs = 31_000
      expect(await attemptsOf(await chat('test/fragile'))).toEqual(['dead unreachable', 'b 200'])
      expect(await attemptsOf(await chat('test/fragile'))).toEqual(['b 200'])
    })

    test("a 429's Retry-After sets the cooldown, bounded at 300 s; one that is not a wait leaves cooldownSeconds", async () => {
      // A date names whole seconds, read when the third 429 comes: some 10 s away, less the calls' time.
      const date = () => new Date(Math.ceil(Date.now() / 1000) * 1000 + 10_000).toUTCString()
      const cases = [
        { header: () => '2', min: 2, max: 2 },
        { header: date, min: 7, max: 11 },
        { header: () => '99999', min: 300, max: 300 },
        { header: () => 'soon', min: 30, max: 30 },
        { header: () => '0', min: 30, max: 30 },
      ]
      for (const { header, min, max } of cases) {
        suite.upstream.reset()
        lines = []
        shiftMs = 0
        const harness = gateway()
        const chat = await caller(harness)
        suite.upstream.always(tooMany(header()))
        for (let call = 1; call <= 4; call++) expect((await chat('test/smart')).status).toBe(200)
        expect(received(suite.upstream, 'smart-a')).toBe(3)
        const [started] = events('route cooling down')
        expect(started).toMatchObject({ provider: 'a', upstream_model: 'smart-a', reason: 'http_429' })
        expect(started.cooldown_seconds).toBeGreaterThanOrEqual(min)
        expect(started.cooldown_seconds).toBeLessThanOrEqual(max)
        shiftMs = min * 1000 - 1000
        await chat('test/smart')
        expect(received(suite.upstream, 'smart-a')).toBe(3)
        shiftMs = max * 1000 + 100
        await chat('test/smart')
        expect(received(suite.upstream, 'smart-a')).toBe(4)
      }
    })

    test('when every route of the model is cooling down they are all tried in order anyway', async () => {
      const harness = gateway()
      const chat = await caller(harness)
      suite.upstream.always(unavailable)
      suite.secondUpstream.always(unavailable)
      for (let call = 1; call <= 3; call++) {
        const reply = await chat('test/smart')
        expect(reply.status).toBe(502)
        expect(reply.json.error.code).toBe('upstream_error')
      }
      expect(await cooling(harness)).toBe(2)
      const still = await chat('test/smart')
      expect(still.status).toBe(502)
      expect(still.json.error.code).toBe('upstream_error')
      expect([received(suite.upstream, 'smart-a'), received(suite.secondUpstream, 'smart-b')]).toEqual([4, 4])

      // The second route recovers while cooling: it serves, and its cooldown ends with the success.
      suite.secondUpstream.always({ text: 'Back.' })
      const served = await chat('test/smart')
      expect(served.status).toBe(200)
      expect(served.json.choices[0].message.content).toBe('Back.')
      expect([received(suite.upstream, 'smart-a'), received(suite.secondUpstream, 'smart-b')]).toEqual([5, 5])
      expect(events('route cooldown ended')).toMatchObject([{ provider: 'b', upstream_model: 'smart-b', reason: 'success' }])
      expect(await cooling(harness)).toBe(1)
      // Now one route is not cooling: the other is skipped again.
      expect((await chat('test/smart')).status).toBe(200)
      expect([received(suite.upstream, 'smart-a'), received(suite.secondUpstream, 'smart-b')]).toEqual([5, 6])
    })

    test('a success clears the count: 2 failures, a success, 2 failures start no cooldown', async () => {
      const harness = gateway()
      const chat = await caller(harness)
      suite.upstream.script(unavailable, unavailable, {}, unavailable, unavailable)
      for (let call = 1; call <= 6; call++) expect((await chat('test/smart')).status).toBe(200)
      expect(received(suite.upstream, 'smart-a')).toBe(6)
      expect(events('route cooling down')).toEqual([])
      expect(await cooling(harness)).toBe(0)
    })

    test("the client's own 4xx and a refused provider key are not failures of the route", async () => {
      const harness = gateway()
      const chat = await caller(harness)
      suite.upstream.always({ kind: 'error', status: 400, body: { error: { message: 'bad parameter', type: 'invalid_request_error' } } })
      for (let call = 1; call <= 4; call++) expect((await chat('test/smart')).status).toBe(400)
      suite.upstream.always({ kind: 'error', status: 401 })
      for (let call = 1; call <= 4; call++) expect((await chat('test/smart')).status).toBe(200)
      expect(received(suite.upstream, 'smart-a')).toBe(8)
      expect(events('route cooling down')).toEqual([])
    })

    test('cooldownSeconds 0 turns cooldowns off for the provider', async () => {
      const harness = gateway({ a: { cooldownSeconds: 0 } })
      const chat = await caller(harness)
      suite.upstream.always(tooMany('60'))
      for (let call = 1; call <= 5; call++) expect((await chat('test/smart')).status).toBe(200)
      expect(received(suite.upstream, 'smart-a')).toBe(5)
      expect(events('route cooling down')).toEqual([])
      expect(await cooling(harness)).toBe(0)
    })

    test('a fractional cooldownSeconds ends on its own, with its log line, without traffic', async () => {
      const harness = gateway({ a: { cooldownSeconds: 0.2 } })
      const chat = await caller(harness)
      suite.upstream.always(unavailable)
      for (let call = 1; call <= 3; call++) expect((await chat('test/smart')).status).toBe(200)
      expect(events('route cooling down')).toMatchObject([{ provider: 'a', cooldown_seconds: 0.2 }])
      for (let waited = 0; waited < 100 && events('route cooldown ended').length === 0; waited++) await Bun.sleep(20)
      expect(events('route cooldown ended')).toMatchObject([{ provider: 'a', upstream_model: 'smart-a', reason: 'elapsed' }])
      expect(await cooling(harness)).toBe(0)
    })
  })
}
