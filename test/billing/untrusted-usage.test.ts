import { beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

/**
 * Usage an upstream reports is untrusted input (docs/billing.md#untrusted-usage): a count that is negative,
 * fractional, not a number, or beyond the whole numbers a double holds exactly is never priced.
 * The call is charged its full hold, the ledger marks the usage invalid, a warning is logged,
 * and no money moves the wrong way. (Whole numbers, however implausible, are priced:
 * anomalous-usage.test.ts.)
 */
const LIES: [string, unknown][] = [
  ['negative', -100_000_000],
  ['fractional', 10.5],
  ['NaN as a string', 'NaN'],
  ['a numeric string', '12'],
  ['absurdly large', 1e300],
]

for (const kind of testDatabases) {
  describe(`untrusted upstream usage (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)
    beforeEach(() => suite.upstream.reset())

    /** Runs one call whose upstream lies about `field`, and checks the money around it. */
    async function expectChargedAtHold(send: (key: string) => Promise<{ status: number; text: string }>) {
      const { key, id: keyId, accountId } = await suite.harness.key()
      const warnings = spyOn(console, 'error').mockImplementation(() => {})
      let reply: { status: number; text: string }
      let lines: string[]
      try {
        reply = await send(key)
        lines = warnings.mock.calls.map((call) => String(call[0]))
      } finally {
        warnings.mockRestore()
      }
      expect(reply.status).toBe(200)
      expect(reply.text).not.toContain('internal_error')
      const entries = (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as any[]
      const hold = entries.find((entry) => entry.kind === 'hold')
      const charge = entries.find((entry) => entry.kind === 'charge')
      expect(charge.amount).toBe(hold.amount)
      expect(charge.amount).toBeGreaterThan(0)
      expect(charge.uncollected).toBe(0)
      expect(charge.usage.invalid).toBe(true)
      expect(entries.some((entry) => entry.kind === 'release')).toBe(false)
      const wallet = (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(wallet.balance).toBeCloseTo(100 - hold.amount, 6)
      expect(wallet.held).toBe(0)
      expect(lines.some((line) => line.includes('untrusted upstream usage'))).toBe(true)
    }

    for (const [name, value] of LIES) {
      test(`chat, whole answer: ${name} prompt tokens`, async () => {
        suite.upstream.script({ usage: { prompt_tokens: value as number, completion_tokens: 5 } })
        await expectChargedAtHold((key) =>
          suite.harness.call('POST', '/v1/chat/completions', {
            headers: bearer(key),
            body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 },
          }),
        )
      })

      test(`chat, streamed: ${name} completion tokens`, async () => {
        suite.upstream.script({ usage: { prompt_tokens: 10, completion_tokens: value as number } })
        await expectChargedAtHold(async (key) => {
          const reply = await suite.harness.call('POST', '/v1/chat/completions', {
            headers: bearer(key),
            body: { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50, stream: true, stream_options: { include_usage: true } },
          })
          expect(reply.text.trim().endsWith('data: [DONE]')).toBe(true)
          return reply
        })
      })

      test(`messages, native: ${name} cache-read tokens`, async () => {
        suite.upstream.script({ usage: { prompt_tokens: 10, completion_tokens: 5, cached_tokens: value as number } })
        await expectChargedAtHold((key) =>
          suite.harness.call('POST', '/v1/messages', {
            headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
            body: { model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
          }),
        )
      })

      test(`embeddings: ${name} prompt tokens`, async () => {
        suite.upstream.script({ usage: { prompt_tokens: value as number, completion_tokens: 0 } })
        await expectChargedAtHold((key) =>
          suite.harness.call('POST', '/v1/embeddings', { headers: bearer(key), body: { model: 'test/embed', input: 'some text to embed' } }),
        )
      })
    }

    test('after every lie, the books balance', async () => {
      await expectBooksBalance(suite.database.db)
    })
  })
}
