import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'
import { expectOneSession } from './agent-session'

/**
 * The real Codex CLI (npm @openai/codex), `codex exec` with a config.toml whose provider has
 * base_url at the gateway's /v1, env_key naming a Tollgate key and wire_api = "responses": with
 * an OpenAI model (native Responses route) and an Anthropic one (translated to messages).
 */
const codex = resolve('node_modules/.bin/codex')

describe('Codex CLI through the gateway', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true })
  const homes: string[] = []

  beforeAll(async () => {
    served.upstream.always({ text: 'The magic word is tollgate.', usage: { prompt_tokens: 500, completion_tokens: 7 } })
  })
  afterAll(async () => {
    for (const home of homes) rmSync(home, { recursive: true, force: true })
  })

  const cases = [
    { model: 'test/cheap', upstreamPath: '/v1/responses', price: { input: 1, output: 2 }, websocket: false },
    { model: 'anthropic/claude-test', upstreamPath: '/v1/messages', price: { input: 3, output: 15 }, websocket: false },
    // With supports_websockets the provider's calls go over one socket (docs/api.md#responses-over-websocket).
    { model: 'test/cheap', upstreamPath: '/v1/responses', price: { input: 1, output: 2 }, websocket: true },
    { model: 'anthropic/claude-test', upstreamPath: '/v1/messages', price: { input: 3, output: 15 }, websocket: true },
  ]
  /** A CODEX_HOME whose config points Codex at the gateway for `model`, over a WebSocket when asked. */
  function codexHome(model: string, websocket: boolean): string {
    const home = mkdtempSync(join(tmpdir(), 'tollgate-codex-'))
    homes.push(home)
    writeFileSync(
      join(home, 'config.toml'),
      [
        `model = "${model}"`,
        'model_provider = "tollgate"',
        '',
        '[model_providers.tollgate]',
        'name = "Tollgate"',
        `base_url = "${served.origin}/v1"`,
        'env_key = "TOLLGATE_KEY"',
        'wire_api = "responses"',
        ...(websocket ? ['supports_websockets = true'] : []),
        '',
      ].join('\n'),
    )
    return home
  }

  for (const { model, upstreamPath, price, websocket } of cases) {
    test(`codex exec with ${model}${websocket ? ' over a WebSocket' : ''} prints the answer and the call is billed`, async () => {
      const { key, id: keyId } = await served.harness.key()
      const home = codexHome(model, websocket)
      served.upstream.reset()
      served.upstream.always({ text: 'The magic word is tollgate.', usage: { prompt_tokens: 500, completion_tokens: 7 } })
      served.seen.length = 0
      served.harness.logs.length = 0
      const child = Bun.spawn([codex, 'exec', '--skip-git-repo-check', 'What is the magic word?'], {
        cwd: home,
        env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, TOLLGATE_KEY: key },
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const timer = setTimeout(() => child.kill(), 90_000)
      const [stdout, code, stderr] = await Promise.all([new Response(child.stdout).text(), child.exited, new Response(child.stderr).text()])
      if (code !== 0) console.log(stderr.slice(-3000), served.harness.logs)
      clearTimeout(timer)
      expect({ code, stdout: stdout.trim() }).toEqual({ code: 0, stdout: 'The magic word is tollgate.' })
      // The request log says how each turn came: over HTTP, or as a message on the socket.
      const turns = served.harness.logs.map((line) => JSON.parse(line)).filter((line) => line.method === 'POST' && line.route === '/v1/responses')
      expect(turns.length).toBeGreaterThan(0)
      if (websocket) {
        expect(served.seen).toContain('WEBSOCKET /v1/responses 101')
        expect(served.seen).not.toContain('POST /v1/responses 200')
        expect(turns.map((line) => [line.transport, line.status])).toEqual(turns.map(() => ['websocket', 200]))
        // Codex continues its warm-up with previous_response_id: the gateway sent every upstream the whole input instead.
        expect(served.upstream.received.filter((request) => request.body?.previous_response_id !== undefined)).toEqual([])
      } else {
        expect(served.seen).toContain('POST /v1/responses 200')
        expect(turns.map((line) => line.transport)).toEqual(turns.map(() => 'http'))
      }
      expect(served.upstream.received.map((request) => request.path)).toContain(upstreamPath)
      const charges = (await served.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.filter((entry: { kind: string }) => entry.kind === 'charge')
      expect(charges.length).toBeGreaterThan(0)
      expect(charges[0].amount).toBe(Math.ceil(500 * price.input + 7 * price.output) / 1e6)
      await expectOneSession(served.harness, keyId, charges)
    }, 120_000)
  }

  // A tool round trip on one socket: Codex continues its first response with previous_response_id
  // and only the tool's output; every upstream call got the whole conversation instead.
  for (const model of ['test/cheap', 'anthropic/claude-test']) {
    test(`codex exec with ${model} over a WebSocket: a tool call and its answer, two billed calls on one socket`, async () => {
      const { key, id: keyId } = await served.harness.key()
      const home = codexHome(model, true)
      served.upstream.reset()
      served.upstream.script(
        { toolCalls: [{ id: 'call_1', name: 'no_such_tool', arguments: '{}' }], usage: { prompt_tokens: 300, completion_tokens: 5 } },
        { text: 'The magic word is tollgate.', usage: { prompt_tokens: 320, completion_tokens: 7 } },
      )
      served.seen.length = 0
      served.harness.logs.length = 0
      const child = Bun.spawn([codex, 'exec', '--skip-git-repo-check', 'What is the magic word?'], {
        cwd: home,
        env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, TOLLGATE_KEY: key },
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const timer = setTimeout(() => child.kill(), 90_000)
      const [stdout, code, stderr] = await Promise.all([new Response(child.stdout).text(), child.exited, new Response(child.stderr).text()])
      clearTimeout(timer)
      if (code !== 0) console.log(stderr.slice(-3000))
      expect({ code, stdout: stdout.trim() }).toEqual({ code: 0, stdout: 'The magic word is tollgate.' })
      expect(served.seen.filter((line) => line.startsWith('WEBSOCKET'))).toEqual(['WEBSOCKET /v1/responses 101'])
      const calls = served.upstream.received
      expect(calls).toHaveLength(2)
      expect(calls.filter((request) => request.body?.previous_response_id !== undefined)).toEqual([])
      // The second call carried the first one's input, its tool call and the tool's output.
      expect(JSON.stringify(calls[1]!.body).length).toBeGreaterThan(JSON.stringify(calls[0]!.body).length)
      expect(JSON.stringify(calls[1]!.body)).toContain('call_1')
      const charges = (await served.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.filter((entry: { kind: string }) => entry.kind === 'charge')
      expect(charges).toHaveLength(2)
      const turns = served.harness.logs.map((line) => JSON.parse(line)).filter((line) => line.method === 'POST' && line.route === '/v1/responses')
      expect(turns.map((line) => [line.transport, line.status])).toEqual([
        ['websocket', 200],
        ['websocket', 200],
      ])
    }, 120_000)
  }
})
