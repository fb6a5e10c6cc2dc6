import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases, type FreshDatabase } from '../support/databases'
import { startGateway, testConfig, type TestGateway } from '../support/gateway'
import { mockCatalogEnv } from '../support/mock-catalog'
import { MockUpstream } from '../upstream/mock-upstream'

/**
 * The real Claude Code CLI (npm @anthropic-ai/claude-code), one-shot `claude -p`, with
 * ANTHROPIC_BASE_URL at the gateway and the mock upstream answering: it must print the answer,
 * and the call must be billed.
 */
describe('Claude Code CLI through the gateway', () => {
  const upstream = new MockUpstream()
  let database: FreshDatabase
  let harness: TestGateway
  let server: ReturnType<typeof Bun.serve>
  let home: string
  const seen: string[] = []

  beforeAll(async () => {
    upstream.start().always({ text: 'The magic word is tollgate.', usage: { prompt_tokens: 5000, completion_tokens: 9 } })
    database = await testDatabases[0]!.open()
    harness = startGateway(database, { config: testConfig(mockCatalogEnv(upstream.baseUrl, upstream.baseUrl)) })
    server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (request) => {
        const response = await harness.gateway.handle(request)
        const url = new URL(request.url)
        seen.push(`${request.method} ${url.pathname}${url.search} ${response.status}`)
        return response
      },
    })
    home = mkdtempSync(join(tmpdir(), 'tollgate-claude-home-'))
  })
  afterAll(async () => {
    server.stop(true)
    upstream.stop()
    harness.services.close()
    await database.close()
    rmSync(home, { recursive: true, force: true })
  })

  test('claude -p prints the answer and the call is billed', async () => {
    const { key, id: keyId } = await harness.key()
    const child = Bun.spawn(['node_modules/.bin/claude', '-p', 'What is the magic word?'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.port}`,
        ANTHROPIC_API_KEY: key,
        ANTHROPIC_MODEL: 'claude-sonnet-4-5',
        ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-sonnet-4-5',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_AUTOUPDATER: '1',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const timer = setTimeout(() => child.kill(), 90_000)
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    clearTimeout(timer)
    expect({ code, stdout: stdout.trim() }).toEqual({ code: 0, stdout: 'The magic word is tollgate.' })
    expect(stderr).not.toContain('API Error')

    expect(seen).toContain('HEAD /api/hello 200')
    expect(seen).toContain('POST /v1/messages?beta=true 200')
    const call = upstream.received.find((request) => request.path === '/v1/messages')!
    expect(call.query).toBe('?beta=true')
    expect(call.body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true })
    expect(call.body.tools.length).toBeGreaterThan(0)
    expect(call.body.thinking).toBeDefined()
    expect(call.headers['anthropic-beta']).toContain('claude-code')
    expect(call.headers['x-api-key']).toBe('sk-ant-a')

    const charges = (await harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.filter((entry: { kind: string }) => entry.kind === 'charge')
    expect(charges.length).toBeGreaterThan(0)
    expect(charges[0].amount).toBe((5000 * 3 + 9 * 15) / 1e6)
  }, 120_000)
})
