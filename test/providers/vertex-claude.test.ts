import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportPKCS8, exportSPKI, generateKeyPair, importSPKI, jwtVerify } from 'jose'
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../src/canonical/prompt'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * Claude on Vertex AI: rawPredict / streamRawPredict under a Google bearer token, from a
 * configured access token or signed by the gateway from a service-account key.
 */
describe('Vertex AI (Claude on the publisher endpoint)', () => {
  let publicKeyPem: string
  /** A service-account key of its own, and a catalogue of two Vertex AI providers on the mock: one signs its tokens, one reads a static token. */
  const suite = gatewaySuite(testDatabases[0]!, {
    env: async ({ upstream }) => {
      const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
      publicKeyPem = await exportSPKI(publicKey)
      const dir = mkdtempSync(join(tmpdir(), 'tollgate-vertex-'))
      const keyFile = join(dir, 'service-account.json')
      writeFileSync(
        keyFile,
        JSON.stringify({
          type: 'service_account',
          client_email: 'gateway@proj.iam.gserviceaccount.com',
          private_key: await exportPKCS8(privateKey),
          token_uri: `${upstream.origin}/token`,
        }),
      )
      const configFile = join(dir, 'tollgate.json')
      writeFileSync(
        configFile,
        JSON.stringify({
          providers: {
            signed: { api: 'vertex', baseUrl: upstream.origin, project: 'proj', location: 'us-east5', serviceAccountKeyFile: keyFile },
            static: { api: 'vertex', baseUrl: upstream.origin, project: 'proj', location: 'europe-west1', accessTokenEnv: 'TEST_VERTEX_TOKEN' },
          },
          models: [
            {
              id: 'anthropic/claude-vertex',
              type: 'chat',
              routes: [{ provider: 'signed', model: 'claude-vertex@001' }],
              pricing: { input: 3, output: 15 },
              maxOutputTokens: 1000,
            },
            {
              id: 'anthropic/claude-static',
              type: 'chat',
              routes: [{ provider: 'static', model: 'claude-static@001' }],
              pricing: { input: 3, output: 15 },
              maxOutputTokens: 1000,
            },
            // No maximum configured: requests and holds fall back on the gateway's default.
            {
              id: 'anthropic/claude-unbounded',
              type: 'chat',
              routes: [{ provider: 'static', model: 'claude-unbounded@001' }],
              pricing: { input: 3, output: 15 },
            },
          ],
        }),
      )
      return { TOLLGATE_CONFIG: configFile, TEST_VERTEX_TOKEN: 'static-token' }
    },
  })
  const upstream = suite.upstream

  const hi = [{ role: 'user', content: 'hi' }]

  test('messages: rawPredict with anthropic_version and no model in the body, a signed service-account token', async () => {
    const { key } = await suite.harness.key()
    upstream.script({ text: 'From Vertex.', usage: { prompt_tokens: 12, completion_tokens: 3 } })
    const reply = await suite.harness.call('POST', '/v1/messages', {
      headers: { 'x-api-key': key },
      body: { model: 'claude-vertex', max_tokens: 50, messages: hi },
    })
    expect(reply.status).toBe(200)
    expect(reply.json).toMatchObject({ model: 'claude-vertex', content: [{ type: 'text', text: 'From Vertex.' }], usage: { cost: (12 * 3 + 3 * 15) / 1e6 } })

    const [tokenRequest, call] = upstream.received
    expect(tokenRequest!.path).toBe('/token')
    expect(tokenRequest!.body.grant_type).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer')
    const { payload } = await jwtVerify(tokenRequest!.body.assertion, await importSPKI(publicKeyPem, 'RS256'), { audience: `${upstream.origin}/token` })
    expect(payload).toMatchObject({ iss: 'gateway@proj.iam.gserviceaccount.com', scope: 'https://www.googleapis.com/auth/cloud-platform' })

    expect(call!.path).toBe('/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-vertex@001:rawPredict')
    expect(call!.headers.authorization).toBe('Bearer ya29.mock-token')
    expect(call!.body).toEqual({ max_tokens: 50, messages: hi, anthropic_version: 'vertex-2023-10-16' })
  })

  test('the token is reused; streaming goes to streamRawPredict', async () => {
    const { key } = await suite.harness.key()
    upstream.reset()
    upstream.script({ text: 'Streamed from Vertex.' })
    const reply = await suite.harness.call('POST', '/v1/messages', {
      headers: { 'x-api-key': key },
      body: { model: 'claude-vertex', max_tokens: 50, messages: hi, stream: true },
    })
    expect(reply.text).toContain('event: message_stop')
    expect(upstream.received.map((request) => request.path)).toEqual([
      '/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-vertex@001:streamRawPredict',
    ])
  })

  test('chat completions through Vertex, with a configured access token', async () => {
    const { key } = await suite.harness.key()
    upstream.reset()
    upstream.script({ text: 'Chat via Vertex.', usage: { prompt_tokens: 5, completion_tokens: 4 } })
    const reply = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'anthropic/claude-static', messages: hi } })
    expect(reply.json).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { content: 'Chat via Vertex.' } }],
      usage: { cost: (5 * 3 + 4 * 15) / 1e6 },
    })
    const call = upstream.received[0]!
    expect(call.path).toBe('/v1/projects/proj/locations/europe-west1/publishers/anthropic/models/claude-static@001:rawPredict')
    expect(call.headers.authorization).toBe('Bearer static-token')
    expect(call.body.anthropic_version).toBe('vertex-2023-10-16')
    // max_tokens omitted: the model's maximum, not a smaller default of the translation's own.
    expect(call.body.max_tokens).toBe(1000)
  })

  test('omitted output limits: the model maximum on chat and responses; without one, the hold default, on both sides', async () => {
    const { key, id: keyId } = await suite.harness.key({ account_id: (await suite.harness.account(10)).id })
    const cases: [string, string, object][] = [
      ['/v1/chat/completions', 'anthropic/claude-static', { messages: hi }],
      ['/v1/responses', 'anthropic/claude-static', { input: 'hi' }],
      ['/v1/chat/completions', 'anthropic/claude-unbounded', { messages: hi }],
    ]
    const sent: number[] = []
    for (const [path, model, body] of cases) {
      upstream.reset()
      upstream.script({ text: 'ok', usage: { prompt_tokens: 5, completion_tokens: 1 } })
      const reply = await suite.harness.call('POST', path, { headers: bearer(key), body: { model, ...body } })
      expect(reply.status).toBe(200)
      sent.push(upstream.received[0]!.body.max_tokens)
    }
    expect(sent).toEqual([1000, 1000, DEFAULT_MAX_OUTPUT_TOKENS])
    // The last hold was sized for the same default: 32,768 tokens at 15 credits per million, plus the input estimate.
    const ledger = (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as { kind: string; amount: number }[]
    const lastHold = ledger.find((entry) => entry.kind === 'hold')!
    expect(lastHold.amount - (DEFAULT_MAX_OUTPUT_TOKENS * 15) / 1e6).toBeWithin(0, 0.001)
  })
})
