import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * The real Gemini CLI (npm @google/gemini-cli), one-shot `gemini -p`, with GOOGLE_GEMINI_BASE_URL
 * at the gateway, a Tollgate key as GEMINI_API_KEY and API-key authentication selected in its
 * settings (docs/upstreams.md#coding-agents): on a Gemini route and on a translated one, it must
 * print the answer, and the call must be billed.
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

  /** The model as the CLI names it, the upstream path its call reaches, and what the gateway forwarded. */
  const ROUTES = [
    { kind: 'a Gemini route, natively', model: 'gemini-test', upstreamPath: '/v1beta/models/gemini-test-a:streamGenerateContent' },
    { kind: 'an OpenAI-format route, translated', model: 'test/cheap', upstreamPath: '/v1/chat/completions' },
  ] as const

  for (const route of ROUTES) {
    test(`gemini -p on ${route.kind} prints the answer and the call is billed`, async () => {
      const { key, id: keyId } = await served.harness.key()
      const child = Bun.spawn([join(process.cwd(), 'node_modules/.bin/gemini'), '-p', 'What is the magic word?', '-m', route.model], {
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

      expect(served.seen).toContain(`POST /v1beta/models/${route.model}:streamGenerateContent?alt=sse 200`)
      const call = served.upstream.received.findLast((request) => request.path === route.upstreamPath)
      // Its own tools and system instruction reach the route, as sent or translated.
      expect(JSON.stringify(call?.body)).toContain('What is the magic word?')
      expect(call?.body.tools?.length).toBeGreaterThan(0)

      const charges = (await served.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.filter((entry: { kind: string }) => entry.kind === 'charge')
      expect(charges.length).toBeGreaterThan(0)
    }, 120_000)
  }
})
