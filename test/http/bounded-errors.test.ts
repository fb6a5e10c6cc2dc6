import { describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * An error that quotes what the client sent (a model id, a field name) quotes a bounded part of
 * it: a megabyte model id is a 404 of a few kilobytes, in either envelope, and the upstream is
 * never asked.
 */
describe('errors quote a bounded part of the request', () => {
  const suite = gatewaySuite(testDatabases[0]!)
  const huge = 'a'.repeat(1_000_000)

  test('a megabyte model id: 404 model_not_found, the message bounded, param named', async () => {
    const { key } = await suite.harness.key()
    const chat = await suite.harness.call('POST', '/v1/chat/completions', {
      headers: bearer(key),
      body: { model: huge, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(chat.status).toBe(404)
    expect(chat.text.length).toBeLessThan(3_000)
    expect(chat.json.error).toMatchObject({ code: 'model_not_found', param: 'model' })
    expect(chat.json.error.message.startsWith("The model 'aaaa")).toBe(true)

    const messages = await suite.harness.call('POST', '/v1/messages', {
      headers: bearer(key),
      body: { model: huge, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(messages.status).toBe(404)
    expect(messages.text.length).toBeLessThan(3_000)
    expect(suite.upstream.received).toHaveLength(0)
  })

  test('an unknown admin field of a megabyte: 400 naming a bounded param', async () => {
    const reply = await suite.harness.admin('POST', '/accounts', { name: 'bounded', [huge]: 1 })
    expect(reply.status).toBe(400)
    expect(reply.text.length).toBeLessThan(3_000)
    expect(reply.json.error.param.length).toBeLessThanOrEqual(201)
  })
})
