import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * The real Gemini CLI (npm @google/gemini-cli), one-shot `gemini -p`, with GOOGLE_GEMINI_BASE_URL
 * at the gateway, a Tollgate key as GEMINI_API_KEY and API-key authentication selected in its
 * settings (docs/upstreams.md#coding-agents): it must print the answer, and the call must be billed.
 */
describe('Gemini CLI through the gateway', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true })
  let home: string

  beforeAll(() => {
    served.upstream.always({ text: 'The magic word is tollgate.', usage: { prompt_tokens: 5000, completion_tokens: 9 } })
    home = mkdtempSync(join(tmpdir(), 'tollgate-gemini-home-'))
    mkdirSync(join(home, '.gemini'))
    writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }))
  })
  afterAll(() => rmSync(home, { recursive: true, force: true }))

  test('gemini -p prints the answer and the call is billed', async () => {
    const { key, id: keyId } = await served.harness.key()
    const child = Bun.spawn([join(process.cwd(), 'node_modules/.bin/gemini'), '-p', 'What is the magic word?', '-m', 'gemini-test'], {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        GOOGLE_GEMINI_BASE_URL: served.origin,
        GEMINI_API_KEY: key,
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
        GEMINI_TELEMETRY_ENABLED: 'false',
        NO_BROWSER: 'true',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const timer = setTimeout(() => child.kill(), 90_000)
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    clearTimeout(timer)
    if (code !== 0) console.log(stderr.slice(-3000), served.seen)
    expect({ code, stdout: stdout.trim() }).toEqual({ code: 0, stdout: 'The magic word is tollgate.' })

    expect(served.seen).toContain('POST /v1beta/models/gemini-test:streamGenerateContent?alt=sse 200')
    const call = served.upstream.received.find((request) => request.path === '/v1beta/models/gemini-test-a:streamGenerateContent')
    // Its own tools and system instruction pass through to the Gemini route as it sent them.
    expect(call?.body.contents.length).toBeGreaterThan(0)
    expect(call?.body.tools?.[0]?.functionDeclarations?.length).toBeGreaterThan(0)
    expect(call?.body.systemInstruction).toBeDefined()
    expect(call?.headers['x-goog-api-key']).toBe('gemini-key-a')

    const charges = (await served.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.filter((entry: { kind: string }) => entry.kind === 'charge')
    expect(charges.length).toBeGreaterThan(0)
  }, 120_000)
})
