import { afterAll, beforeAll, beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportPKCS8, generateKeyPair } from 'jose'
import { scrubCredentials } from '../../src/util/scrub-credentials'
import { testDatabases } from '../support/databases'
import { ADMIN_TOKEN, bearer, testConfig } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * Every credential the gateway holds is scrubbed by value from upstream text, whatever its shape
 * (docs/operations.md#credentials-in-upstream-text): a provider that quotes the key it was given
 * in a 400 (which the client reads), a 401, a 500 or a failed stream leaves that key in no reply,
 * no log line and no exported span, as it is, URL-encoded or JSON-escaped. None of these values
 * looks like a credential to the shape patterns.
 */
const OPENAI_KEY = 'upstream-openai-key-7f3a9c51'
/** The same provider's key after a reload. */
const ROTATED_KEY = 'rotated-openai-key-4e4e'
/** From the environment (apiKeyEnv), with characters every encoding writes differently. */
const COMPAT_KEY = 'compat/key+with spaces&"quotes"-42'
const CLAUDE_KEY = 'claude-compat-key-2b7e'
const GEMINI_KEY = 'gemini-plain-key-55aa'
/** A Vertex access token from the environment (accessTokenEnv). */
const VERTEX_TOKEN = 'vertex-env-token-9c0d'
/** The token the gateway obtains for a Vertex service account. */
const OBTAINED_TOKEN = 'obtained-sa-token-31f7'
const METRICS_TOKEN = 'metrics/token "q"+7'
const COLLECTOR_KEY = 'collector/key-8d1e'
const GATEWAY_TOKENS = [ADMIN_TOKEN, METRICS_TOKEN, COLLECTOR_KEY]

/** How a quoted value may be written: as it is, percent-encoded (a URL's query), JSON-escaped. */
const writtenForms = (value: string) => [
  value,
  encodeURIComponent(value),
  new URLSearchParams({ k: value }).toString().slice(2),
  JSON.stringify(value).slice(1, -1),
]

/** What the echoing upstream does with its next request. */
type Reaction = { status: 400 | 401 | 500 } | { stream: 'responses-failed' | 'chat-error' }

/**
 * An upstream that quotes back the credential it was sent (and the gateway's own tokens, as a
 * proxy echoing headers might), in each API's error envelope. Its token endpoint issues the
 * service account's token; the assertion it was given is quoted too.
 */
class EchoingUpstream {
  reaction: Reaction = { status: 400 }
  private assertion = ''
  private server: ReturnType<typeof Bun.serve> | undefined

  start(): this {
    this.server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => this.handle(request) })
    return this
  }

  get origin(): string {
    if (!this.server) throw new Error('not started')
    return `http://127.0.0.1:${this.server.port}`
  }

  stop(): void {
    this.server?.stop(true)
  }

  private async handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname
    if (path === '/token') {
      this.assertion = new URLSearchParams(await request.text()).get('assertion') ?? ''
      return Response.json({ access_token: OBTAINED_TOKEN, expires_in: 3600, token_type: 'Bearer' })
    }
    const credential =
      request.headers.get('x-api-key') ?? request.headers.get('x-goog-api-key') ?? (request.headers.get('authorization') ?? '').replace(/^Bearer /, '')
    const quoted = [credential, ...GATEWAY_TOKENS, this.assertion].filter((value) => value !== '')
    const message = `Incorrect API key provided: ${quoted.join(' and ')}. Retry at ?key=${quoted.map(encodeURIComponent).join('&key=')} with ${JSON.stringify({ keys: quoted })}`
    const reaction = this.reaction
    if ('stream' in reaction) {
      const events =
        reaction.stream === 'responses-failed'
          ? [
              `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress' } })}\n\n`,
              `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: 1, response: { id: 'resp_1', status: 'failed', error: { code: 'invalid_api_key', message } } })}\n\n`,
            ]
          : [`data: ${JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } })}\n\n`]
      return new Response(events.join(''), { headers: { 'content-type': 'text/event-stream' } })
    }
    const anthropic = path === '/v1/messages' || path.includes(':rawPredict') || path.includes(':streamRawPredict')
    const body = anthropic
      ? { type: 'error', error: { type: 'invalid_request_error', message } }
      : path.includes(':generateContent')
        ? { error: { code: reaction.status, message, status: 'INVALID_ARGUMENT' } }
        : { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }
    return Response.json(body, { status: reaction.status })
  }
}

/** A local OTLP/HTTP receiver keeping the text of every export. */
function otlpReceiver() {
  const exports: string[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      exports.push(await request.text())
      return Response.json({})
    },
  })
  return { exports, url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}

const MODELS = {
  openai: 'echo/openai',
  compat: 'echo/compat',
  claude: 'anthropic/echo-claude',
  gemini: 'echo/gemini',
  vertexEnv: 'echo/vertex-env',
  vertexSigned: 'echo/vertex-signed',
} as const

for (const kind of testDatabases) {
  describe(`credentials quoted by an upstream are scrubbed by value (${kind.kind})`, () => {
    const upstream = new EchoingUpstream()
    const receiver = otlpReceiver()
    const consoleLines: string[] = []
    const spies: ReturnType<typeof spyOn>[] = []
    let key: string
    let env: Record<string, string>
    let writeConfig: (openaiKey: string) => void = () => undefined

    beforeAll(() => {
      upstream.start()
    })
    // A catalogue of every kind of provider on the echoing upstream, each with a credential of its own.
    const suite = gatewaySuite(kind, {
      mockUpstream: false,
      env: async () => {
        const dir = mkdtempSync(join(tmpdir(), 'tollgate-echo-'))
        const { privateKey } = await generateKeyPair('RS256', { extractable: true })
        const keyFile = join(dir, 'service-account.json')
        writeFileSync(
          keyFile,
          JSON.stringify({
            client_email: `echo-${kind.kind}@proj.iam.gserviceaccount.com`,
            private_key: await exportPKCS8(privateKey),
            token_uri: `${upstream.origin}/token`,
          }),
        )
        const route = (id: string, provider: string) => ({
          id,
          type: 'chat',
          routes: [{ provider, model: `${provider}-model` }],
          pricing: { input: 1, output: 1 },
          maxOutputTokens: 100,
        })
        const vertex = { api: 'vertex', baseUrl: upstream.origin, project: 'proj', location: 'us-east5' }
        const configFile = join(dir, 'tollgate.json')
        writeConfig = (openaiKey) =>
          writeFileSync(
            configFile,
            JSON.stringify({
              providers: {
                openai: { api: 'openai', baseUrl: `${upstream.origin}/v1`, apiKey: openaiKey },
                compat: { api: 'openai', baseUrl: `${upstream.origin}/v1`, apiKeyEnv: 'ECHO_COMPAT_KEY', responsesApi: false },
                claude: { api: 'anthropic', baseUrl: upstream.origin, apiKeyEnv: 'ECHO_CLAUDE_KEY' },
                gemini: { api: 'gemini', baseUrl: upstream.origin, apiKey: GEMINI_KEY },
                vertexEnv: { ...vertex, accessTokenEnv: 'ECHO_VERTEX_TOKEN' },
                vertexSigned: { ...vertex, serviceAccountKeyFile: keyFile },
              },
              models: Object.entries(MODELS).map(([provider, id]) => route(id, provider)),
            }),
          )
        writeConfig(OPENAI_KEY)
        env = {
          TOLLGATE_CONFIG: configFile,
          ECHO_COMPAT_KEY: COMPAT_KEY,
          ECHO_CLAUDE_KEY: CLAUDE_KEY,
          ECHO_VERTEX_TOKEN: VERTEX_TOKEN,
          TOLLGATE_METRICS_TOKEN: METRICS_TOKEN,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${encodeURIComponent(COLLECTOR_KEY)}`,
        }
        return env
      },
    })
    beforeAll(async () => {
      key = (await suite.harness.key()).key
      for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
        spies.push(spyOn(console, method).mockImplementation((...parts: unknown[]) => consoleLines.push(parts.map(String).join(' '))))
      }
    })
    afterAll(() => {
      for (const spy of spies) spy.mockRestore()
      upstream.stop()
      receiver.stop()
    })
    beforeEach(() => {
      upstream.reaction = { status: 400 }
    })

    const chat = (model: string, stream = false) =>
      suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model, stream, messages: [{ role: 'user', content: 'hi' }] } })

    /** No reply, log line or exported span holds any written form of any of the values. */
    const expectNowhere = async (replies: string[], values: string[]) => {
      await suite.harness.gateway.flushTraces()
      expect(receiver.exports.length).toBeGreaterThan(0)
      const texts = [...replies, ...suite.harness.logs, ...consoleLines, ...receiver.exports]
      for (const text of texts) for (const value of values) for (const form of writtenForms(value)) expect(text).not.toContain(form)
    }

    test.each(Object.entries(MODELS))("a 400 quoting the %s provider's credential reaches the client scrubbed", async (provider, model) => {
      const reply = await chat(model)
      expect(reply.status).toBe(400)
      const message: string = reply.json.error.message
      // The upstream's message is the client's to read, only without the credentials.
      expect(message).toStartWith('Incorrect API key provided: [redacted] and [redacted] and [redacted] and [redacted]')
      expect(message).toContain('?key=[redacted]&key=[redacted]')
      const credential = {
        openai: OPENAI_KEY,
        compat: COMPAT_KEY,
        claude: CLAUDE_KEY,
        gemini: GEMINI_KEY,
        vertexEnv: VERTEX_TOKEN,
        vertexSigned: OBTAINED_TOKEN,
      }[provider]
      await expectNowhere([reply.text], [credential ?? 'unknown', ...GATEWAY_TOKENS])
    })

    test('the same in the messages envelope, on a native route', async () => {
      const reply = await suite.harness.call('POST', '/v1/messages', {
        headers: { 'x-api-key': key },
        body: { model: MODELS.claude, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      })
      expect(reply.status).toBe(400)
      expect(reply.json.error.message).toStartWith('Incorrect API key provided: [redacted]')
      await expectNowhere([reply.text], [CLAUDE_KEY, ...GATEWAY_TOKENS])
    })

    test('a 401 and a 500 quoting the key: the client, the log and the trace never see it', async () => {
      const replies: string[] = []
      for (const status of [401, 500] as const) {
        upstream.reaction = { status }
        for (const model of [MODELS.openai, MODELS.compat, MODELS.vertexSigned]) {
          const reply = await chat(model)
          expect(reply.status).toBe(502)
          replies.push(reply.text)
        }
      }
      await expectNowhere(replies, [OPENAI_KEY, COMPAT_KEY, OBTAINED_TOKEN, ...GATEWAY_TOKENS])
    })

    test('a stream that fails quoting the key: a native Responses failure is passed on scrubbed; a chat stream error is not repeated', async () => {
      upstream.reaction = { stream: 'responses-failed' }
      const responses = await suite.harness.call('POST', '/v1/responses', { headers: bearer(key), body: { model: MODELS.openai, input: 'hi', stream: true } })
      expect(responses.status).toBe(200)
      expect(responses.text).toContain('event: response.failed')
      expect(responses.text).toContain('Incorrect API key provided: [redacted]')
      upstream.reaction = { stream: 'chat-error' }
      const chatStream = await chat(MODELS.compat, true)
      expect(chatStream.status).toBe(200)
      expect(chatStream.text).toContain('"error"')
      await expectNowhere([responses.text, chatStream.text], [OPENAI_KEY, COMPAT_KEY, ...GATEWAY_TOKENS])
    })

    test("a reload's new provider key is scrubbed from then on, and so is the key it replaced", async () => {
      writeConfig(ROTATED_KEY)
      suite.harness.services.reloadCatalog(testConfig(env))
      const reply = await chat(MODELS.openai)
      expect(reply.status).toBe(400)
      expect(reply.json.error.message).toStartWith('Incorrect API key provided: [redacted] and')
      // Requests still running with the previous entry may be answered with the previous key.
      expect(scrubCredentials(`quoted ${OPENAI_KEY}`)).toBe('quoted [redacted]')
      await expectNowhere([reply.text], [ROTATED_KEY, ...GATEWAY_TOKENS])
    })
  })
}
