import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isLongRunning } from '../../src/http/long-requests'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { mockCatalogEnv } from '../support/mock-catalog'
import { type GatewayProcess, startGatewayProcess } from '../support/process'
import { MockUpstream } from '../upstream/mock-upstream'

/**
 * A video generation that outlasts Bun's default idle timeout (10 s) still answers: the
 * gateway, run as operators run it, keeps the quiet connection open while it polls.
 */
const upstream = new MockUpstream()
let gateway: GatewayProcess
let dataDir: string

beforeAll(async () => {
  upstream.start()
  upstream.keepRecords = false
  dataDir = mkdtempSync(join(tmpdir(), 'tollgate-long-'))
  gateway = await startGatewayProcess({ ...mockCatalogEnv(upstream.baseUrl, upstream.baseUrl), TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN })
}, 30_000)
afterAll(async () => {
  await gateway.stop()
  upstream.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

test('only video generations lift the idle timeout', () => {
  expect(isLongRunning(new Request('http://127.0.0.1:8080/v1/videos/generations'))).toBe(true)
  expect(isLongRunning(new Request('http://127.0.0.1:8080/v1/videos/generations?x=1'))).toBe(true)
  expect(isLongRunning(new Request('http://127.0.0.1:8080/v1/chat/completions'))).toBe(false)
})

test('a generation of 12 seconds is answered over one quiet connection', async () => {
  const admin = (path: string, body: unknown) =>
    fetch(`${gateway.url}admin/v1${path}`, { method: 'POST', headers: bearer(ADMIN_TOKEN), body: JSON.stringify(body) }).then(
      (response) => response.json() as Promise<any>,
    )
  const account = await admin('/accounts', { name: 'long' })
  await admin(`/accounts/${account.id}/credits`, { amount: 10 })
  const { key } = await admin('/keys', { account_id: account.id, env: 'prod' })
  // Ready 12 s after it starts, polled every 10 ms meanwhile: no byte reaches the client until then.
  upstream.script({ kind: 'video', readyAfterMs: 12_000 })
  const started = Date.now()
  const response = await fetch(`${gateway.url}v1/videos/generations`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'test/sora', prompt: 'a slow sunset', seconds: 4 }),
  })
  const elapsed = Date.now() - started
  expect(response.status).toBe(200)
  expect(((await response.json()) as any).duration_seconds).toBe(4)
  expect(elapsed).toBeGreaterThan(10_000)
}, 60_000)
