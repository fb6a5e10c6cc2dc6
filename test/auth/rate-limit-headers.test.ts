import { afterAll, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer, type Reply } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { mockCatalogEnv } from '../support/mock-catalog'
import { MockUpstream } from '../upstream/mock-upstream'

const hi = [{ role: 'user', content: 'hi' }]

/** The six rate-limit headers of an answer, absent as null. */
function limitsOf(reply: Reply) {
  const header = (name: string) => reply.headers.get(name)
  return {
    requests: [header('x-ratelimit-limit-requests'), header('x-ratelimit-remaining-requests'), header('x-ratelimit-reset-requests')],
    tokens: [header('x-ratelimit-limit-tokens'), header('x-ratelimit-remaining-tokens'), header('x-ratelimit-reset-tokens')],
  }
}

const NONE = [null, null, null]

/**
 * A key with rpm or tpm limits learns where it stands from every answer, the 429 included
 * (docs/billing.md#rate-limit-headers), with the in-memory counter and with Redis.
 */
for (const counter of ['memory', 'redis'] as const) {
  describe(`rate-limit headers (${counter} counter)`, () => {
    // A minute that starts 15 s before the first request.
    let clock = Date.UTC(2026, 10, 22, 12, 0, 15)
    const upstream = new MockUpstream().start().always({ usage: { prompt_tokens: 30, completion_tokens: 10 } })
    const suite = gatewaySuite(testDatabases[testDatabases.length - 1]!, {
      mockUpstream: false,
      now: () => clock,
      env: {
        ...mockCatalogEnv(upstream.baseUrl, upstream.baseUrl),
        ...(counter === 'redis' ? { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } : {}),
      },
    })
    afterAll(() => upstream.stop())
    const chat = (key: string) =>
      suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'test/cheap', messages: hi, max_tokens: 20 } })

    test('requests and tokens count down with each answer; the reset counts down to the minute', async () => {
      clock = Date.UTC(2026, 10, 22, 12, 0, 15)
      const { key } = await suite.harness.key({ rpm: 3, tpm: 100 })
      // Each call uses 30 + 10 tokens, counted once it settles.
      expect(limitsOf(await chat(key))).toEqual({ requests: ['3', '2', '45'], tokens: ['100', '100', '45'] })
      clock += 10_000
      expect(limitsOf(await chat(key))).toEqual({ requests: ['3', '1', '35'], tokens: ['100', '60', '35'] })
      clock += 500
      // Whole seconds, rounded up: 34.5 s left is 35.
      const third = await suite.harness.call('GET', '/v1/models', { headers: bearer(key) })
      expect(third.status).toBe(200)
      expect(limitsOf(third)).toEqual({ requests: ['3', '0', '35'], tokens: ['100', '20', '35'] })
      // The fourth request is over rpm: the 429 carries the headers too, beside Retry-After.
      const refused = await chat(key)
      expectError(refused, 429, 'rate_limit_exceeded')
      expect(limitsOf(refused)).toEqual({ requests: ['3', '0', '35'], tokens: ['100', '20', '35'] })
      expect(refused.headers.get('retry-after')).toBe('35')
      // A new minute: everything is free again.
      clock += 35_000
      expect(limitsOf(await chat(key))).toEqual({ requests: ['3', '2', '60'], tokens: ['100', '100', '60'] })
    })

    test("a key over its tokens is refused with the tokens' headers at 0; the refused request is not counted", async () => {
      clock = Date.UTC(2026, 10, 22, 12, 5, 0)
      const { key } = await suite.harness.key({ tpm: 70 })
      expect(limitsOf(await chat(key))).toEqual({ requests: NONE, tokens: ['70', '70', '60'] })
      expect(limitsOf(await chat(key))).toEqual({ requests: NONE, tokens: ['70', '30', '60'] })
      clock += 20_000
      const refused = await chat(key)
      expectError(refused, 429, 'rate_limit_exceeded')
      expect(limitsOf(refused)).toEqual({ requests: NONE, tokens: ['70', '0', '40'] })
      // On the messages surface's error envelope too.
      const messages = await suite.harness.call('POST', '/v1/messages', { headers: { 'x-api-key': key }, body: {} })
      expectError(messages, 429, 'rate_limit_exceeded', 'messages')
      expect(limitsOf(messages).tokens).toEqual(['70', '0', '40'])
    })

    test('only rpm: the request headers alone; a tpm refusal reads the requests without counting the refused one', async () => {
      clock = Date.UTC(2026, 10, 22, 12, 10, 0)
      const { key } = await suite.harness.key({ rpm: 5 })
      expect(limitsOf(await chat(key))).toEqual({ requests: ['5', '4', '60'], tokens: NONE })
      const both = await suite.harness.key({ rpm: 5, tpm: 40 })
      expect(limitsOf(await chat(both.key)).requests).toEqual(['5', '4', '60'])
      const refused = await chat(both.key)
      expectError(refused, 429, 'rate_limit_exceeded')
      expect(limitsOf(refused)).toEqual({ requests: ['5', '4', '60'], tokens: ['40', '0', '60'] })
    })

    test('a key without limits, and admin answers, carry none', async () => {
      const { key } = await suite.harness.key()
      expect(limitsOf(await chat(key))).toEqual({ requests: NONE, tokens: NONE })
      expect(limitsOf(await suite.harness.admin('GET', '/ledger?limit=1'))).toEqual({ requests: NONE, tokens: NONE })
    })
  })
}
