import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { hashApiKey } from '../../src/auth/api-key-secret'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { ADMIN_TOKEN, bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * docs/api.md#errors and docs/operations.md#logs: no error a client reads and no log line carries a credential, a hash
 * or an SQL parameter, and log lines stay short.
 *
 * The issue asked for a grep over every log line of a whole test run. A preload that captured
 * all console output of `bun test` would tie every test file to this check and break on any
 * file that prints on purpose; instead this one file drives a broad sample of the gateway
 * (inference on three wire formats, upstream errors quoting keys, admin key creation, a wrong
 * key, a failing database query) with every secret it knows, captures every line written
 * (the request log sink and the console, where operational events go) and greps each line
 * for each secret.
 */
const MAX_LOG_LINE = 4096

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

for (const kind of testDatabases) {
  describe(`no secret in any log line or upstream error, on ${kind.kind}`, () => {
    const suite = gatewaySuite(kind)
    const consoleLines: string[] = []
    const spies: ReturnType<typeof spyOn>[] = []

    beforeAll(() => {
      for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
        spies.push(spyOn(console, method).mockImplementation((...parts: unknown[]) => consoleLines.push(parts.map(String).join(' '))))
      }
    })
    afterAll(() => {
      for (const spy of spies) spy.mockRestore()
    })

    test('a broad sample of requests leaves no secret behind', async () => {
      const { harness, upstream } = suite
      const created = await harness.key()
      const apiKey = created.key
      const secrets = [
        apiKey,
        apiKey.slice(-40),
        hashApiKey(apiKey),
        ADMIN_TOKEN,
        sha256(ADMIN_TOKEN),
        // Provider keys: the test config's and the mock catalogue's.
        'sk-test',
        'sk-ant-test',
        'sk-upstream-a',
        'sk-upstream-b',
        'sk-ant-a',
        'gemini-key-a',
      ]
      const replies: string[] = []
      const remember = <Reply extends { text: string }>(reply: Reply) => {
        replies.push(reply.text)
        return reply
      }
      const chat = (model: string) =>
        harness.call('POST', '/v1/chat/completions', { headers: bearer(apiKey), body: { model, messages: [{ role: 'user', content: 'hi' }] } })

      // Inference that works, on three wire formats.
      expect((await chat('test/cheap')).status).toBe(200)
      expect(
        (
          await harness.call('POST', '/v1/messages', {
            headers: { 'x-api-key': apiKey },
            body: { model: 'anthropic/claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
          })
        ).status,
      ).toBe(200)
      expect((await harness.call('POST', '/v1/embeddings', { headers: bearer(apiKey), body: { model: 'test/embed', input: 'hi' } })).status).toBe(200)

      // An upstream 400 quoting its own key, a client's key and an Authorization header reaches the client scrubbed.
      upstream.script({
        kind: 'error',
        status: 400,
        body: {
          error: {
            message: `Incorrect API key provided: sk-upstream-a. Also saw ${apiKey} in Authorization: Bearer ${ADMIN_TOKEN}.`,
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_api_key',
          },
        },
      })
      const refused = remember(await chat('test/cheap'))
      expectError(refused, 400, 'invalid_api_key')
      expect(refused.json.error.message).toBe('Incorrect API key provided: [redacted]. Also saw [redacted] in Authorization: Bearer [redacted].')

      // The same on the messages format, and on Gemini with a Google-shaped key.
      upstream.script({
        kind: 'error',
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: 'invalid x-api-key sk-ant-a given' } },
      })
      const refusedMessages = remember(
        await harness.call('POST', '/v1/messages', {
          headers: { 'x-api-key': apiKey },
          body: { model: 'anthropic/claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
        }),
      )
      expectError(refusedMessages, 400, 'upstream_error', 'messages')
      expect(refusedMessages.json.error.message).toBe('invalid x-api-key [redacted] given')
      upstream.script({
        kind: 'error',
        status: 400,
        body: {
          error: { code: 400, message: 'API key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' },
        },
      })
      const refusedGemini = remember(await chat('google/gemini-test'))
      expectError(refusedGemini, 400, 'invalid_argument')
      expect(refusedGemini.json.error.message).toBe('API key [redacted] not valid. Please pass a valid API key.')

      // An upstream 401 (the gateway's own provider key is wrong) moves on to the next route.
      upstream.script({
        kind: 'error',
        status: 401,
        body: { error: { message: 'Incorrect API key provided: sk-upstream-a.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
      })
      expect(remember(await chat('test/smart')).status).toBe(200)

      // A wrong key, a wrong admin token, a key record; and an unknown route with a key in its
      // path, which the 404 names back to its sender (who sent it) but the log must not.
      remember(await harness.call('GET', '/v1/wallet', { headers: bearer(`${apiKey}x`) }))
      remember(await harness.call('GET', '/admin/v1/keys/x', { headers: bearer(`${ADMIN_TOKEN}x`) }))
      remember(await harness.admin('GET', `/keys/${created.id}`))
      expect((await harness.call('GET', `/v1/${apiKey}`, { headers: bearer(apiKey) })).status).toBe(404)

      // A database query that fails while it carries a key's hash: the lookup of a key not yet cached.
      const second = await harness.key()
      await suite.database.db.execute(sql.raw('alter table api_keys rename column hint to hint_renamed'))
      try {
        const failed = remember(await harness.call('GET', '/v1/wallet', { headers: bearer(second.key) }))
        expect(failed.status).toBeGreaterThanOrEqual(500)
      } finally {
        await suite.database.db.execute(sql.raw('alter table api_keys rename column hint_renamed to hint'))
      }
      secrets.push(second.key, hashApiKey(second.key))

      const lines = [...harness.logs, ...consoleLines]
      // The failed query was logged, and the sample produced a line per request.
      expect(consoleLines.some((line) => line.includes('unhandled error') || line.includes('database'))).toBe(true)
      expect(harness.logs.length).toBeGreaterThanOrEqual(12)
      for (const line of lines) {
        expect(line.length).toBeLessThanOrEqual(MAX_LOG_LINE)
        expect(line).not.toMatch(/params:|Failed query|secret_hash/)
        for (const secret of secrets) expect(line).not.toContain(secret)
      }
      for (const reply of replies) {
        for (const secret of secrets) expect(reply).not.toContain(secret)
      }
    })
  })
}
