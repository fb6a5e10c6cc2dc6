import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'
import { expectOneSession } from './agent-session'

/**
 * The real Claude Code CLI (npm @anthropic-ai/claude-code), one-shot `claude -p`, with
 * ANTHROPIC_BASE_URL at the gateway and the mock upstream answering: it must print the answer,
 * and the call must be billed.
 */
describe('Claude Code CLI through the gateway', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true })
  let home: string

  beforeAll(async () => {
    served.upstream.always({ text: 'The magic word is tollgate.', usage: { prompt_tokens: 5000, completion_tokens: 9 } })
    home = mkdtempSync(join(tmpdir(), 'tollgate-claude-home-'))
  })
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true })
  })

  test('claude -p prints the answer and the call is billed', async () => {
    const { key, id: keyId } = await served.harness.key()
    const child = Bun.spawn(['node_modules/.bin/claude', '-p', 'What is the magic word?'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        ANTHROPIC_BASE_URL: served.origin,
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

    expect(served.seen).toContain('HEAD /api/hello 200')
    expect(served.seen).toContain('POST /v1/messages?beta=true 200')
    const call = served.upstream.received.find((request) => request.path === '/v1/messages')!
    expect(call.query).toBe('?beta=true')
    expect(call.body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true })
    expect(call.body.tools.length).toBeGreaterThan(0)
    expect(call.body.thinking).toBeDefined()
    expect(call.headers['anthropic-beta']).toContain('claude-code')
    expect(call.headers['x-api-key']).toBe('sk-ant-a')

    const charges = (await served.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.filter((entry: { kind: string }) => entry.kind === 'charge')
    expect(charges.length).toBeGreaterThan(0)
    expect(charges[0].amount).toBe((5000 * 3 + 9 * 15) / 1e6)
    await expectOneSession(served.harness, keyId, charges)
  }, 120_000)
})
