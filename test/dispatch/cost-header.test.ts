import { beforeEach, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { bearer, type Reply } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

const hi = [{ role: 'user', content: 'Say hi.' }]

/**
 * Every billed answer that is not a stream carries x-tollgate-cost: the credits its call was
 * charged, the same number as its body's usage.cost and as its charge on the ledger
 * (docs/billing.md#cost-and-rate-limit-headers).
 */
describe('x-tollgate-cost', () => {
  const suite = gatewaySuite(testDatabases[0]!)
  const upstream = suite.upstream
  beforeEach(() => upstream.reset())

  /** The call's charge on the ledger, in credits. */
  async function charged(reply: Reply): Promise<number> {
    const entries = (await suite.harness.admin('GET', `/ledger?request_id=${reply.headers.get('x-request-id')}&kind=charge`)).json.data
    expect(entries).toHaveLength(1)
    return entries[0].amount
  }

  /** The header as a number, checked against the ledger; the header is the number as JSON writes it. */
  async function costHeader(reply: Reply): Promise<number> {
    expect(reply.status).toBe(200)
    const header = reply.headers.get('x-tollgate-cost')
    expect(header).toMatch(/^\d+(\.\d{1,6})?$/)
    const cost = Number(header)
    expect(cost).toBeGreaterThan(0)
    expect(cost).toBe(await charged(reply))
    return cost
  }

  test('whole JSON answers: chat completions, the Responses API, messages and embeddings carry usage.cost in the header', async () => {
    const { key } = await suite.harness.key()
    const usage = { prompt_tokens: 1234, completion_tokens: 56 }
    // The three conversations; embeddings report their own count of the input.
    upstream.script({ usage }, { usage }, { usage })
    const replies = [
      await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/smart', messages: hi } }),
      await suite.harness.call('POST', '/v1/responses', { headers: bearer(key), body: { model: 'test/smart', input: 'Say hi.' } }),
      await suite.harness.call('POST', '/v1/messages', { headers: { 'x-api-key': key }, body: { model: 'claude-test', max_tokens: 100, messages: hi } }),
      await suite.harness.call('POST', '/v1/embeddings', { headers: bearer(key), body: { model: 'test/embed', input: 'a few words to embed' } }),
    ]
    for (const reply of replies) expect(await costHeader(reply)).toBe(reply.json.usage.cost)
  })

  test('binary answers: speech audio and images carry the charge in the header', async () => {
    const { key } = await suite.harness.key()
    const speech = await suite.harness.call('POST', '/v1/audio/speech', { headers: bearer(key), body: { model: 'test/tts', input: 'Hello there, listener.' } })
    expect(speech.headers.get('content-type')).not.toContain('json')
    // test/tts: 15 credits per million characters; 22 characters.
    expect(await costHeader(speech)).toBe(Math.ceil(22 * 15) / 1e6)
    const image = await suite.harness.call('POST', '/v1/images/generations', { headers: bearer(key), body: { model: 'test/image', prompt: 'a cat', n: 2 } })
    // test/image: 0.04 credits an image.
    expect(await costHeader(image)).toBe(0.08)
    expect(image.json.usage.cost).toBe(0.08)
  })

  test('streams carry no cost header (their cost comes in their final usage)', async () => {
    const { key } = await suite.harness.key()
    const stream = await suite.harness.call('POST', '/v1/chat/completions', {
      headers: bearer(key),
      body: { model: 'test/smart', messages: hi, stream: true, stream_options: { include_usage: true } },
    })
    expect(stream.status).toBe(200)
    expect(stream.headers.get('x-tollgate-cost')).toBeNull()
    expect(stream.text).toContain('"cost":')
  })

  test('answers that are not billed carry none: free endpoints, errors', async () => {
    const { key } = await suite.harness.key()
    expect((await suite.harness.call('GET', '/v1/models', { headers: bearer(key) })).headers.get('x-tollgate-cost')).toBeNull()
    upstream.script({ kind: 'error', status: 400 })
    const refused = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/cheap', messages: hi } })
    expect(refused.status).toBe(400)
    expect(refused.headers.get('x-tollgate-cost')).toBeNull()
  })
})
