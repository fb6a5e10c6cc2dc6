import { beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { estimateChatInputTokens } from '../../src/billing/estimator'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { mockCatalog } from '../support/mock-catalog'

const hi = [{ role: 'user', content: 'Say hi.' }]

/** Values no hold may be sized from, besides those above a field's maximum. */
const NOT_COUNTS: unknown[] = [0, -1, 0.5, 1e18, 1e300, '100', null, true]

/**
 * Every client number that sizes a hold is checked before anything is reserved: out of range,
 * the caller gets 400 invalid_request naming the field in its surface's envelope, and there is
 * no hold in the ledger and no upstream request.
 */
for (const kind of testDatabases) {
  describe(`hold-sizing numbers are bounded at the edge (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, {
      secondUpstream: true,
      env: ({ upstream, second }) => {
        const catalog = mockCatalog(upstream.baseUrl, (second ?? upstream).baseUrl)
        // A chat model whose config names no maximum: the fixed ceiling applies.
        const unbounded = { id: 'test/unbounded', type: 'chat', routes: [{ provider: 'a', model: 'unbounded-a' }], pricing: { input: 1, output: 1 } }
        const path = join(mkdtempSync(join(tmpdir(), 'tollgate-bounds-')), 'tollgate.json')
        writeFileSync(path, JSON.stringify({ ...catalog, models: [...catalog.models, unbounded] }))
        return { TOLLGATE_CONFIG: path }
      },
    })
    const a = suite.upstream
    const b = suite.secondUpstream
    beforeEach(() => {
      a.reset()
      b.reset()
    })

    const post = (path: string, key: string, body: object) => suite.harness.call('POST', path, { headers: bearer(key), body })
    const ledger = async (keyId: string) => (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data as any[]

    /** Each body is refused with 400 naming `param` (in the message on /v1/messages), and nothing was held or sent. */
    async function expectRefused(path: string, bodies: object[], param: string): Promise<void> {
      const { key, id: keyId } = await suite.harness.key()
      const surface = path === '/v1/messages' ? 'messages' : 'openai'
      for (const body of bodies) {
        const reply = await post(path, key, body)
        expectError(reply, 400, 'invalid_request', surface)
        if (surface === 'openai') expect({ body, param: reply.json.error.param }).toEqual({ body, param })
        else expect(reply.json.error.message).toContain(param)
      }
      expect(await ledger(keyId)).toEqual([])
      expect([...a.received, ...b.received]).toEqual([])
    }

    test('chat: max_tokens, max_completion_tokens and n', async () => {
      for (const field of ['max_tokens', 'max_completion_tokens']) {
        await expectRefused(
          '/v1/chat/completions',
          [...NOT_COUNTS, 1001].map((value) => ({ model: 'test/cheap', messages: hi, [field]: value })),
          field,
        )
      }
      await expectRefused(
        '/v1/chat/completions',
        [...NOT_COUNTS, 129].map((value) => ({ model: 'test/cheap', messages: hi, n: value })),
        'n',
      )
    })

    test("chat: above the model's maximum, the providers' words; at it exactly, accepted and held", async () => {
      const { key, id: keyId } = await suite.harness.key()
      const over = await post('/v1/chat/completions', key, { model: 'test/smart', messages: hi, max_tokens: 100_000 })
      expect(over.json.error.message).toBe('max_tokens: 100000 > 4000, which is the maximum allowed number of output tokens for test/smart.')

      a.script({ usage: { prompt_tokens: 10, completion_tokens: 10 } })
      const reply = await post('/v1/chat/completions', key, { model: 'test/cheap', messages: hi, max_completion_tokens: 1000, n: 2 })
      expect(reply.status).toBe(200)
      expect(a.received[0]!.body).toMatchObject({ max_completion_tokens: 1000, n: 2 })
      const hold = (await ledger(keyId)).find((entry) => entry.kind === 'hold')
      // Every input token at 1 per million, 2 choices × 1000 output tokens at 2 per million.
      expect(hold.amount).toBe((estimateChatInputTokens({ messages: hi }) + 2 * 1000 * 2) / 1e6)
    })

    test('chat: a model without a configured maximum allows up to the fixed ceiling of 1,000,000 tokens', async () => {
      await expectRefused('/v1/chat/completions', [{ model: 'test/unbounded', messages: hi, max_tokens: 1_000_001 }], 'max_tokens')
      const { key } = await suite.harness.key()
      expect((await post('/v1/chat/completions', key, { model: 'test/unbounded', messages: hi, max_tokens: 1_000_000 })).status).toBe(200)
    })

    test("aliases: checked against the largest candidate's maximum; each candidate asked and held within its own", async () => {
      // tollgate/best tries test/smart (4000 at most, on a then b), then test/cheap (1000 at most, on a).
      await expectRefused('/v1/chat/completions', [{ model: 'tollgate/best', messages: hi, max_tokens: 4001 }], 'max_tokens')
      const { key, id: keyId } = await suite.harness.key()
      a.script({ kind: 'error', status: 500 }, { usage: { prompt_tokens: 10, completion_tokens: 10 } })
      b.script({ kind: 'error', status: 500 })
      const reply = await post('/v1/chat/completions', key, { model: 'tollgate/best', messages: hi, max_tokens: 3000 })
      expect(reply.status).toBe(200)
      expect(reply.json.model).toBe('test/cheap')
      expect([...a.received, ...b.received].map((request) => [request.body.model, request.body.max_tokens])).toEqual([
        ['smart-a', 3000],
        ['cheap-upstream', 1000],
        ['smart-b', 3000],
      ])
      // The dearest candidate's worst case: test/smart, 3000 output tokens at 15 per million.
      const hold = (await ledger(keyId)).find((entry) => entry.kind === 'hold')
      expect(hold.amount).toBe((estimateChatInputTokens({ messages: hi }) * 3 + 3000 * 15) / 1e6)
    })

    test('custom models: the defaults are checked too, since no schema saw them', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      await suite.harness.admin('POST', '/custom-models', {
        account_id: accountId,
        name: 'boundless',
        base_model: 'test/cheap',
        defaults: { max_tokens: 1e300 },
      })
      const reply = await post('/v1/chat/completions', key, { model: 'custom/boundless', messages: hi })
      expectError(reply, 400, 'invalid_request')
      expect(reply.json.error.param).toBe('max_tokens')
      expect(await ledger(keyId)).toEqual([])
      expect(a.received).toEqual([])
    })

    test('messages: max_tokens, in the messages envelope; at the maximum exactly, accepted', async () => {
      const body = (maxTokens: unknown) => ({ model: 'claude-sonnet-4-5', messages: hi, max_tokens: maxTokens })
      await expectRefused('/v1/messages', [...NOT_COUNTS, 64_001].map(body), 'max_tokens')
      const { key } = await suite.harness.key()
      const over = await suite.harness.call('POST', '/v1/messages', { headers: { 'x-api-key': key }, body: body(100_000) })
      expect(over.json.error.message).toBe('max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5.')
      expect((await post('/v1/messages', key, body(64_000))).status).toBe(200)
      expect(a.received[0]!.body.max_tokens).toBe(64_000)
    })

    test('messages: web search max_uses is a whole number up to 100, named by its place in tools', async () => {
      const tools = (maxUses: unknown) => [
        { name: 'get_weather', input_schema: { type: 'object' } },
        { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 1e300 },
        { type: 'web_search_20250305', name: 'web_search', max_uses: maxUses },
      ]
      await expectRefused(
        '/v1/messages',
        [0, -1, 0.5, 1e18, 1e300, '3', true, 101].map((maxUses) => ({ model: 'claude-test', max_tokens: 100, messages: hi, tools: tools(maxUses) })),
        'tools[2].max_uses',
      )
      const { key, id: keyId } = await suite.harness.key()
      expect((await post('/v1/messages', key, { model: 'claude-test', max_tokens: 100, messages: hi, tools: tools(100) })).status).toBe(200)
      // null means "not set": the default allowance of 10 searches.
      expect((await post('/v1/messages', key, { model: 'claude-test', max_tokens: 100, messages: hi, tools: tools(null) })).status).toBe(200)
      const holds = (await ledger(keyId)).filter((entry) => entry.kind === 'hold').map((entry) => entry.amount)
      // Input at the cache-write price (the dearest), 100 output tokens at 15, each search 0.01; newest first.
      const hold = (maxUses: number | null, searches: number) =>
        (Math.ceil(estimateChatInputTokens({ messages: hi, tools: tools(maxUses) }) * 3.75 + 100 * 15) + searches * 10_000) / 1e6
      expect(holds).toEqual([hold(null, 10), hold(100, 100)])
    })

    test('responses: max_output_tokens from 16 to the model maximum', async () => {
      const body = (maxOutput: unknown) => ({ model: 'test/smart', input: 'Say hi.', max_output_tokens: maxOutput })
      await expectRefused('/v1/responses', [...NOT_COUNTS, 15, 4001].map(body), 'max_output_tokens')
      const { key } = await suite.harness.key()
      expect((await post('/v1/responses', key, body(4000))).status).toBe(200)
      expect(a.received[0]!.body.max_output_tokens).toBe(4000)
    })

    test('images: n from 1 to 10', async () => {
      await expectRefused(
        '/v1/images/generations',
        [...NOT_COUNTS, 11].map((n) => ({ model: 'test/image', prompt: 'a cat', n })),
        'n',
      )
      const { key } = await suite.harness.key()
      const reply = await post('/v1/images/generations', key, { model: 'test/image', prompt: 'a cat', n: 10 })
      expect(reply.json.data).toHaveLength(10)
      expect(reply.json.usage.cost).toBe(0.4)
    })

    test('speech: input up to 4096 characters', async () => {
      await expectRefused('/v1/audio/speech', [{ model: 'test/tts', input: 'a'.repeat(4097) }], 'input')
      const { key } = await suite.harness.key()
      expect((await post('/v1/audio/speech', key, { model: 'test/tts', input: 'a'.repeat(4096) })).status).toBe(200)
    })
  })
}
