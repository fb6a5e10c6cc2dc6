import { describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * A body whose value has the wrong type is refused by the gateway's own check, at the first
 * error and naming it, before the framework's validation (which takes a wrongly typed megabyte
 * apart value by value, for seconds of CPU). The answer says what the value should have been.
 */
for (const kind of testDatabases) {
  describe(`bodies of the wrong shape (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { mockUpstream: false })

    test('a megabyte string where the messages array belongs: 400 naming messages, not one of its characters', async () => {
      const { key } = await suite.harness.key()
      const reply = await suite.harness.call('POST', '/v1/chat/completions', {
        headers: { authorization: `Bearer ${key}` },
        body: { model: 'test/cheap', messages: 'y'.repeat(1_000_000) },
      })
      expect(reply.status).toBe(400)
      expect(reply.json.error).toMatchObject({ type: 'invalid_request_error', param: 'messages', message: "Invalid value for 'messages': Expected array." })
    })

    test('the same on /v1/messages, in its own envelope', async () => {
      const { key } = await suite.harness.key()
      const reply = await suite.harness.call('POST', '/v1/messages', {
        headers: { 'x-api-key': key },
        body: { model: 'claude-test', max_tokens: 10, messages: 'y'.repeat(1_000_000) },
      })
      expect(reply.status).toBe(400)
      expect(reply.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: "Invalid value for 'messages': Expected array." } })
    })

    test('an admin body: a five-megabyte string where an object belongs is refused naming the field', async () => {
      const account = await suite.harness.account(1)
      const reply = await suite.harness.admin('POST', '/custom-models', {
        account_id: account.id,
        name: 'x',
        base_model: 'test/cheap',
        defaults: 'y'.repeat(5_000_000),
      })
      expect(reply.status).toBe(400)
      expect(reply.json.error).toMatchObject({ param: 'defaults', message: "Invalid value for 'defaults': Expected object." })
    })
  })
}
