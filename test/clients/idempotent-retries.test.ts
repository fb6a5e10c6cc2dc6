import { beforeEach, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { testDatabases } from '../support/databases'
import type { TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/** The charges on the ledger of one key. */
async function chargesOf(harness: TestGateway, keyId: string): Promise<unknown[]> {
  const entries = (await harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as { kind: string }[]
  return entries.filter((entry) => entry.kind === 'charge')
}

/**
 * The official SDKs with their retries on and a client timeout shorter than the upstream's
 * answer: the first attempt times out, the retries meet 409 until the call ends, then the replay.
 * The SDKs send no idempotency key by themselves: each call passes its own (docs/api.md#idempotent-retries).
 */
for (const kind of testDatabases) {
  describe(`official SDKs retrying with an Idempotency-Key (${kind.kind})`, () => {
    const served = gatewaySuite(kind, { served: true })
    const upstream = served.upstream
    beforeEach(() => upstream.reset())
    const CLIENT_TIMEOUT_MS = 300
    const UPSTREAM_DELAY_MS = 1_200

    test('openai: one upstream call, one charge, and the result is the first answer', async () => {
      const { key, id } = await served.harness.key()
      const client = new OpenAI({ apiKey: key, baseURL: `${served.origin}/v1`, maxRetries: 8, timeout: CLIENT_TIMEOUT_MS })
      upstream.script({ text: 'Worth the wait.', delayMs: UPSTREAM_DELAY_MS, usage: { prompt_tokens: 9, completion_tokens: 3 } })
      const { data, response } = await client.chat.completions
        .create({ model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'Idempotency-Key': crypto.randomUUID() } })
        .withResponse()
      expect(data.choices[0]!.message.content).toBe('Worth the wait.')
      expect((data.usage as unknown as { cost: number }).cost).toBe((9 + 6) / 1e6)
      expect(response.headers.get('idempotent-replayed')).toBe('true')
      expect(upstream.received).toHaveLength(1)
      expect(upstream.received[0]!.aborted).toBe(false)
      expect(served.seen.filter((line) => line.startsWith('POST /v1/chat/completions') && line.endsWith(' 409')).length).toBeGreaterThan(0)
      expect(await chargesOf(served.harness, id)).toHaveLength(1)
    })

    test('anthropic: one upstream call, one charge, and the result is the first answer', async () => {
      const { key, id } = await served.harness.key()
      const client = new Anthropic({ apiKey: key, baseURL: served.origin, maxRetries: 8, timeout: CLIENT_TIMEOUT_MS })
      upstream.script({ text: 'Claude took its time.', delayMs: UPSTREAM_DELAY_MS, usage: { prompt_tokens: 11, completion_tokens: 4 } })
      const { data, response } = await client.messages
        .create({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'Idempotency-Key': crypto.randomUUID() } })
        .withResponse()
      expect(data.content[0]).toMatchObject({ type: 'text', text: 'Claude took its time.' })
      expect(response.headers.get('idempotent-replayed')).toBe('true')
      expect(upstream.received).toHaveLength(1)
      expect(await chargesOf(served.harness, id)).toHaveLength(1)
    })
  })
}
