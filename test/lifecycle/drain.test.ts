import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { MockUpstream } from '../upstream/mock-upstream'
import { adminCli, ChildGateway, chat, readRest, writeLifecycleCatalog } from './child-gateway'

/**
 * SIGTERM as an orchestrator sends it: readiness turns 503 at once, the listener serves on for
 * TOLLGATE_DRAIN_SECONDS, a stream in flight runs to its end and is billed, then the process
 * exits 0 (docs/operations.md#shutdown).
 */
describe('drain on SIGTERM', () => {
  const upstream = new MockUpstream()
  let gateway: ChildGateway | undefined
  let configPath: string

  beforeAll(() => {
    upstream.start()
    configPath = writeLifecycleCatalog(upstream.baseUrl)
  })
  afterAll(() => upstream.stop())
  afterEach(() => {
    gateway?.dispose()
    gateway = undefined
  })

  const post = (key: string, body: string) =>
    gateway?.fetch('/v1/chat/completions', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body }) ??
    Promise.reject(new Error('no gateway'))

  test('readyz is 503 while the listener still serves; a stream in flight finishes and is charged; exit 0', async () => {
    gateway = await ChildGateway.start({ TOLLGATE_CONFIG: configPath, TOLLGATE_DRAIN_SECONDS: '3', TOLLGATE_SHUTDOWN_TIMEOUT_SECONDS: '30' })
    const { key, accountId } = await gateway.fundedKey(10)
    expect((await gateway.fetch('/v1/readyz')).status).toBe(200)

    upstream.script({ text: 'one two three four five six seven eight', chunkDelayMs: 600, usage: { prompt_tokens: 10, completion_tokens: 8 } })
    const streamed = await post(key, chat('test/cheap', true))
    expect(streamed.status).toBe(200)
    const streamId = streamed.headers.get('x-request-id')
    const reader = streamed.body?.getReader()
    if (!reader) throw new Error('no body')
    await reader.read()

    gateway.signal('SIGTERM')
    await gateway.waitFor((line) => String(line.message).startsWith('draining'))
    const readiness = await gateway.fetch('/v1/readyz')
    expect(readiness.status).toBe(503)
    expect(await readiness.json()).toEqual({ status: 'not_ready', draining: true })
    expect((await gateway.fetch('/v1/healthz')).status).toBe(200)

    // New requests are still served (and billed) during the drain window.
    upstream.script({ text: 'during the drain', usage: { prompt_tokens: 10, completion_tokens: 3 } })
    const during = await post(key, chat('test/cheap'))
    expect(during.status).toBe(200)
    const duringId = during.headers.get('x-request-id')

    // The stream outlives the drain window: the listener closes with it in flight, and it still ends.
    const closed = await gateway.waitFor((line) => String(line.message).startsWith('listener closed'))
    expect(closed.in_flight).toBeGreaterThanOrEqual(1)
    const rest = await readRest(reader)
    expect(rest).toContain('eight')
    expect(rest.trim().endsWith('data: [DONE]')).toBe(true)

    expect(await gateway.child.exited).toBe(0)
    const phases = gateway.lines.map((line) => String(line.message))
    const order = ['draining', 'listener closed', 'requests in flight done', 'exit'].map((phase) => phases.findIndex((message) => message.startsWith(phase)))
    expect(order.every((index, position) => index >= 0 && (position === 0 || index > (order[position - 1] ?? -1)))).toBe(true)
    await expect(fetch(`${gateway.url}/v1/healthz`)).rejects.toThrow()

    // Both calls are in the ledger of the stopped gateway: charged, their holds closed.
    const entries = adminCli(gateway.workdir, ['ledger', '--account-id', accountId]).data as { kind: string; amount: number; request_id: string | null }[]
    const charge = (requestId: string | null) => entries.find((entry) => entry.kind === 'charge' && entry.request_id === requestId)
    // 10 input tokens at 1000 and 8 output tokens at 2000 credits per million.
    expect(charge(streamId)?.amount).toBe(0.026)
    expect(charge(duringId)?.amount).toBe(0.016)
    expect(entries.filter((entry) => entry.kind === 'hold')).toHaveLength(2)
    expect(entries.filter((entry) => entry.kind === 'charge')).toHaveLength(2)
  }, 120_000)

  test('a stream past the shutdown timeout is cut and charged for what was streamed; a second signal exits at once', async () => {
    gateway = await ChildGateway.start({ TOLLGATE_CONFIG: configPath, TOLLGATE_DRAIN_SECONDS: '0', TOLLGATE_SHUTDOWN_TIMEOUT_SECONDS: '0.5' })
    const { key, accountId } = await gateway.fundedKey(10)
    upstream.script({ text: 'one two three four five six seven eight nine ten', chunkDelayMs: 1000, usage: { prompt_tokens: 10, completion_tokens: 10 } })
    const streamed = await post(key, chat('test/cheap', true))
    const streamId = streamed.headers.get('x-request-id')
    const reader = streamed.body?.getReader()
    if (!reader) throw new Error('no body')
    await reader.read()

    gateway.signal('SIGTERM')
    const timedOut = await gateway.waitFor((line) => String(line.message).startsWith('shutdown timeout'))
    expect(timedOut).toMatchObject({ level: 'warn', in_flight: 1 })
    expect(await gateway.child.exited).toBe(0)
    const entries = adminCli(gateway.workdir, ['ledger', '--account-id', accountId]).data as { kind: string; amount: number; request_id: string | null }[]
    const ofStream = entries.filter((entry) => entry.request_id === streamId)
    // Settled as a stream its client left: charged for what was generated, the rest of the hold given back.
    expect(ofStream.map((entry) => entry.kind).sort()).toEqual(['charge', 'hold', 'release'])
    const amountOf = (kind: string) => ofStream.find((entry) => entry.kind === kind)?.amount ?? Number.NaN
    expect(amountOf('charge')).toBeGreaterThan(0)
    expect(Math.round((amountOf('charge') + amountOf('release')) * 1e6)).toBe(Math.round(Math.abs(amountOf('hold')) * 1e6))

    // Another gateway on a fresh directory, stopped twice: the second signal does not wait for the drain.
    gateway.dispose()
    gateway = await ChildGateway.start({ TOLLGATE_CONFIG: configPath, TOLLGATE_DRAIN_SECONDS: '60' })
    gateway.signal('SIGTERM')
    await gateway.waitFor((line) => String(line.message).startsWith('draining'))
    gateway.signal('SIGTERM')
    expect(await gateway.child.exited).toBe(143)
    expect(gateway.lines.some((line) => String(line.message).startsWith('second signal'))).toBe(true)
  }, 120_000)
})
