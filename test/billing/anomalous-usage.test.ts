import { beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { parseExposition } from '../support/exposition'
import { ADMIN_TOKEN, bearer, type Reply } from '../support/gateway'
import { type GatewaySuite, gatewaySuite } from '../support/gateway-suite'
import { expectBooksBalance } from '../support/ledger-checks'

/**
 * Usage made of non-negative whole numbers is the upstream's bill to the operator: it is priced
 * however large, the payer is charged at most the hold, and the rest is recorded as
 * `uncollected` (docs/billing.md#untrusted-usage). Usage that is implausible (more output than
 * the upstream was asked for, a price beyond four holds) is marked anomalous on the ledger,
 * logged as a warning and counted in tollgate_usage_anomalies_total{provider,reason}.
 */

/** One surface reached one way: the model, its per-million prices, the provider that serves it, and the call. */
interface Case {
  name: string
  model: string
  pricing: { input: number; output: number }
  provider: string
  send(suite: GatewaySuite, key: string, maxTokens: number, stream: boolean): Promise<Reply>
  /** How a complete stream of this surface ends. */
  streamEnd: string
}

const hi = [{ role: 'user', content: 'hi' }]

const chat = (model: string) => (suite: GatewaySuite, key: string, maxTokens: number, stream: boolean) =>
  suite.harness.call('POST', '/v1/chat/completions', {
    headers: bearer(key),
    body: { model, messages: hi, max_tokens: maxTokens, ...(stream ? { stream, stream_options: { include_usage: true } } : {}) },
  })
const messages = (model: string) => (suite: GatewaySuite, key: string, maxTokens: number, stream: boolean) =>
  suite.harness.call('POST', '/v1/messages', {
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: { model, max_tokens: maxTokens, messages: hi, ...(stream ? { stream } : {}) },
  })
const responses = (model: string) => (suite: GatewaySuite, key: string, maxTokens: number, stream: boolean) =>
  suite.harness.call('POST', '/v1/responses', {
    headers: bearer(key),
    body: { model, input: 'hi', max_output_tokens: maxTokens, ...(stream ? { stream } : {}) },
  })

const CASES: Case[] = [
  { name: 'chat', model: 'test/cheap', pricing: { input: 1, output: 2 }, provider: 'a', send: chat('test/cheap'), streamEnd: 'data: [DONE]' },
  {
    name: 'messages, native',
    model: 'anthropic/claude-sonnet-4-5',
    pricing: { input: 3, output: 15 },
    provider: 'native',
    send: messages('claude-sonnet-4-5'),
    streamEnd: 'event: message_stop',
  },
  {
    name: 'messages, translated',
    model: 'anthropic/claude-bridge',
    pricing: { input: 2, output: 10 },
    provider: 'a',
    send: messages('anthropic/claude-bridge'),
    streamEnd: 'event: message_stop',
  },
  {
    name: 'responses, native',
    model: 'test/cheap',
    pricing: { input: 1, output: 2 },
    provider: 'a',
    send: responses('test/cheap'),
    streamEnd: 'event: response.completed',
  },
  {
    name: 'responses, translated',
    model: 'test/chat-only',
    pricing: { input: 1, output: 4 },
    provider: 'b',
    send: responses('test/chat-only'),
    streamEnd: 'event: response.completed',
  },
]

const MAX_TOKENS = 50
/** Far beyond any hold here: 4e12 input tokens is millions of credits. */
const HUGE_INPUT = 4_000_000_000_000

interface LedgerEntry {
  kind: string
  amount: number
  uncollected: number
  usage: Record<string, unknown> | null
}

for (const kind of testDatabases) {
  describe(`anomalous upstream usage (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)
    beforeEach(() => suite.upstream.reset())

    const anomalyCount = async (provider: string, reason: string) => {
      const reply = await suite.harness.call('GET', '/metrics', { headers: bearer(ADMIN_TOKEN) })
      const sample = parseExposition(reply.text).samples.find(
        (entry) => entry.name === 'tollgate_usage_anomalies_total' && entry.labels.provider === provider && entry.labels.reason === reason,
      )
      return sample?.value ?? 0
    }

    /**
     * Runs one call whose upstream reports `usage`, and checks the money: the charge is the price
     * capped at the hold, the rest uncollected; returns the charge's usage record and the warnings.
     */
    async function expectPricedAsReported(
      entry: Case,
      stream: boolean,
      usage: { prompt_tokens: number; completion_tokens: number },
    ): Promise<{ usage: Record<string, unknown>; warnings: string[] }> {
      suite.upstream.script({ usage })
      const { key, id: keyId, accountId } = await suite.harness.key()
      const spy = spyOn(console, 'error').mockImplementation(() => {})
      let reply: Reply
      let warnings: string[]
      try {
        reply = await entry.send(suite, key, MAX_TOKENS, stream)
        warnings = spy.mock.calls.map((call) => String(call[0])).filter((line) => line.includes('anomalous upstream usage'))
      } finally {
        spy.mockRestore()
      }
      expect(reply.status).toBe(200)
      if (stream) expect(reply.text).toContain(entry.streamEnd)
      const entries = (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as LedgerEntry[]
      const hold = entries.find((item) => item.kind === 'hold')
      const charge = entries.find((item) => item.kind === 'charge')
      if (!hold || !charge?.usage) throw new Error(`no hold or charge: ${JSON.stringify(entries)}`)
      // Per-million prices in credits are micro-credits per token.
      const priceMicros = usage.prompt_tokens * entry.pricing.input + usage.completion_tokens * entry.pricing.output
      const holdMicros = Math.round(hold.amount * 1e6)
      const chargedMicros = Math.min(priceMicros, holdMicros)
      expect(Math.round(charge.amount * 1e6)).toBe(chargedMicros)
      expect(Math.round(charge.uncollected * 1e6)).toBe(priceMicros - chargedMicros)
      expect(charge.usage.invalid).toBeUndefined()
      expect(charge.usage.input_tokens).toBe(usage.prompt_tokens)
      expect(charge.usage.output_tokens).toBe(usage.completion_tokens)
      const wallet = (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      expect(Math.round(wallet.balance * 1e6)).toBe(100_000_000 - chargedMicros)
      expect(wallet.held).toBe(0)
      return { usage: charge.usage, warnings }
    }

    for (const entry of CASES) {
      for (const stream of [false, true]) {
        const name = `${entry.name}, ${stream ? 'streamed' : 'whole answer'}`

        test(`${name}: a price far beyond the hold is charged the hold, the rest uncollected, marked anomalous`, async () => {
          const before = await anomalyCount(entry.provider, 'price_over_hold')
          const { usage, warnings } = await expectPricedAsReported(entry, stream, { prompt_tokens: HUGE_INPUT, completion_tokens: 5 })
          expect(usage.anomalous).toBe(true)
          expect(String(usage.anomalous_reason)).toContain('times the hold')
          expect(warnings).toHaveLength(1)
          expect(await anomalyCount(entry.provider, 'price_over_hold')).toBe(before + 1)
        })

        test(`${name}: more output than the upstream was asked for is priced and marked anomalous`, async () => {
          const before = await anomalyCount(entry.provider, 'output_over_limit')
          const { usage, warnings } = await expectPricedAsReported(entry, stream, { prompt_tokens: 10, completion_tokens: MAX_TOKENS + 1 })
          expect(usage.anomalous).toBe(true)
          expect(String(usage.anomalous_reason)).toContain(`${MAX_TOKENS + 1} output tokens reported, ${MAX_TOKENS} asked`)
          expect(warnings).toHaveLength(1)
          expect(await anomalyCount(entry.provider, 'output_over_limit')).toBe(before + 1)
        })

        test(`${name}: output up to the limit is plausible`, async () => {
          const { usage, warnings } = await expectPricedAsReported(entry, stream, { prompt_tokens: 10, completion_tokens: MAX_TOKENS })
          expect(usage.anomalous).toBeUndefined()
          expect(warnings).toHaveLength(0)
        })
      }
    }

    test('after every anomaly, the books balance', async () => {
      await expectBooksBalance(suite.database.db)
    })
  })
}
