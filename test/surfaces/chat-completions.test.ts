import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { IdentityProvider } from '../support/identity-provider'

const hi = [{ role: 'user', content: 'Say hi.' }]

/** Reads a streamed reply into its data payloads. */
function dataOf(text: string): string[] {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice(6))
}

for (const kind of testDatabases) {
  describe(`chat completions, billed (${kind.kind})`, () => {
    let idp: IdentityProvider
    beforeAll(async () => {
      idp = await new IdentityProvider().start()
    })
    afterAll(() => idp.stop())
    const suite = gatewaySuite(kind, {
      secondUpstream: true,
      env: () => ({ TOLLGATE_OIDC_ISSUER: idp.issuer, TOLLGATE_OIDC_AUDIENCE: idp.audience }),
    })
    const a = suite.upstream
    const b = suite.secondUpstream
    beforeEach(() => {
      a.reset()
      b.reset()
    })

    const chat = (key: string, body: object, headers: Record<string, string> = {}) =>
      suite.harness.call('POST', '/v1/chat/completions', { headers: { ...bearer(key), ...headers }, body })
    const wallet = async (accountId: string) => (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
    const ledger = async (query: string) => (await suite.harness.admin('GET', `/ledger?${query}`)).json.data as any[]

    test('non-streaming: exact charge from the provider usage, the rest of the hold released', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      a.script({ text: 'Hi there.', usage: { prompt_tokens: 1000, completion_tokens: 500, cached_tokens: 200 } })
      const reply = await chat(key, { model: 'test/smart', messages: hi })
      expect(reply.status).toBe(200)
      // 800 input x 3 + 200 cached x 0.3 + 500 output x 15, per million.
      const cost = (800 * 3 + 200 * 0.3 + 500 * 15) / 1e6
      expect(reply.json.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 500, cost })
      expect(reply.json.model).toBe('test/smart')
      expect(reply.json.choices[0].message.content).toBe('Hi there.')
      expect(await wallet(accountId)).toEqual({ balance: 100 - cost, held: 0, available: 100 - cost })

      const entries = await ledger(`key_id=${keyId}`)
      expect(entries.map((entry) => entry.kind)).toEqual(['release', 'charge', 'hold'])
      const [release, charge, hold] = entries
      expect(charge).toMatchObject({ amount: cost, model: 'test/smart', route: 'a', request_id: reply.headers.get('x-request-id'), uncollected: 0 })
      expect(charge.usage).toMatchObject({ input_tokens: 800, cache_read_tokens: 200, output_tokens: 500, source: 'provider' })
      expect(release.amount).toBeCloseTo(hold.amount - cost, 6)
    })

    test('a charge never exceeds its hold: the excess is recorded as uncollected', async () => {
      const { key, id: keyId, accountId } = await suite.harness.key()
      // The upstream reports more than the estimate allowed for (within the plausible overrun: beyond it the usage is not trusted).
      a.script({ usage: { prompt_tokens: 500, completion_tokens: 100 } })
      const reply = await chat(key, { model: 'test/cheap', messages: hi, max_tokens: 100 })
      const entries = await ledger(`key_id=${keyId}`)
      const hold = entries.find((entry) => entry.kind === 'hold')
      const charge = entries.find((entry) => entry.kind === 'charge')
      expect(charge.amount).toBe(hold.amount)
      expect(charge.uncollected).toBeCloseTo((500 + 200) / 1e6 - hold.amount, 6)
      expect(charge.uncollected).toBeGreaterThan(0)
      expect(entries.some((entry) => entry.kind === 'release')).toBe(false)
      expect(reply.json.usage.cost).toBe(hold.amount)
      expect((await wallet(accountId)).balance).toBeCloseTo(100 - hold.amount, 6)
    })

    test('forwards the upstream model id and the provider key, never the client key', async () => {
      const { key } = await suite.harness.key()
      await chat(key, { model: 'test/smart', messages: hi, tools: [{ type: 'function', function: { name: 'f', parameters: {} } }], seed: 7 })
      const sent = a.received[0]!
      expect(sent.body).toMatchObject({ model: 'smart-a', seed: 7, tools: [{ type: 'function', function: { name: 'f' } }] })
      expect(sent.headers.authorization).toBe('Bearer sk-upstream-a')
      expect(JSON.stringify(sent)).not.toContain(key)
    })

    test('tool calls come back unchanged', async () => {
      const { key } = await suite.harness.key()
      a.script({ toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] })
      const reply = await chat(key, { model: 'test/cheap', messages: hi })
      expect(reply.json.choices[0]).toMatchObject({
        finish_reason: 'tool_calls',
        message: { content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      })
    })

    test('streaming without include_usage: usage asked upstream, billed, not shown', async () => {
      const { key, accountId } = await suite.harness.key()
      a.script({ text: 'one two three', usage: { prompt_tokens: 100, completion_tokens: 3 } })
      const reply = await chat(key, { model: 'test/cheap', messages: hi, stream: true })
      expect(reply.headers.get('content-type')).toContain('text/event-stream')
      const data = dataOf(reply.text)
      expect(data.at(-1)).toBe('[DONE]')
      const chunks = data.slice(0, -1).map((line) => JSON.parse(line))
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('one two three')
      expect(chunks.every((chunk) => chunk.usage === undefined && chunk.model === 'test/cheap')).toBe(true)
      expect(a.received[0]!.body.stream_options).toEqual({ include_usage: true })
      const cost = (100 * 1 + 3 * 2) / 1e6
      expect((await wallet(accountId)).balance).toBe(100 - cost)
    })

    test('streaming with include_usage: the usage chunk carries the cost', async () => {
      const { key } = await suite.harness.key()
      a.script({ text: 'ok', usage: { prompt_tokens: 10, completion_tokens: 1 } })
      const reply = await chat(key, { model: 'test/cheap', messages: hi, stream: true, stream_options: { include_usage: true } })
      const data = dataOf(reply.text)
      const usageChunk = JSON.parse(data.at(-2)!)
      expect(usageChunk.choices).toEqual([])
      expect(usageChunk.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 1, cost: (10 + 2) / 1e6 })
    })

    test('402 before any upstream request when the wallet cannot cover the worst case', async () => {
      const { id: accountId } = await suite.harness.account(0.001)
      const { key } = await suite.harness.key({ account_id: accountId })
      // 1000 output tokens at 2 per million = 0.002 > 0.001.
      const refused = await chat(key, { model: 'test/cheap', messages: hi })
      expectError(refused, 402, 'insufficient_balance')
      // The message says what the worst case needs, what is there, and which field sizes it.
      expect(refused.json.error.message).toMatch(/^Not enough credit for this request: its worst case is 0\.002\d* credits and 0\.001 are available\. /)
      expect(refused.json.error.message).toContain("No max_tokens was set, so the worst case assumes the model's maximum of 1000 output tokens")
      expect(a.received).toHaveLength(0)
      expect(await wallet(accountId)).toEqual({ balance: 0.001, held: 0, available: 0.001 })
      // A smaller max_tokens fits.
      expect((await chat(key, { model: 'test/cheap', messages: hi, max_tokens: 100 })).status).toBe(200)
    })

    test('403 api_key_quota_exceeded when the hold would pass the monthly quota', async () => {
      const { key } = await suite.harness.key({ monthly_quota: 0.001 })
      expectError(await chat(key, { model: 'test/cheap', messages: hi }), 403, 'api_key_quota_exceeded')
      expect(a.received).toHaveLength(0)
      a.script({ usage: { prompt_tokens: 10, completion_tokens: 10 } })
      expect((await chat(key, { model: 'test/cheap', messages: hi, max_tokens: 100 })).status).toBe(200)
      const month = (await suite.harness.call('GET', '/v1/wallet', { headers: bearer(key) })).json.key
      expect(month).toMatchObject({ monthly_quota: 0.001, month_spent: (10 + 20) / 1e6 })
    })

    test('a key with an allotment pays from it alone; a user token from the user allotment', async () => {
      const { id: accountId } = await suite.harness.account(50)
      const { key, id: keyId } = await suite.harness.key({ account_id: accountId, allotment: 0.001 })
      const refused = await chat(key, { model: 'test/cheap', messages: hi, max_completion_tokens: 900 })
      expectError(refused, 402, 'insufficient_balance')
      // The figures are the allotment's, which pays: never the account's 50 credits.
      expect(refused.json.error.message).toContain(' credits and 0.001 are available.')
      expect(refused.json.error.message).not.toContain('50')
      expect(refused.json.error.message).toContain('The worst case assumes max_completion_tokens = 900 output tokens')
      await suite.harness.admin('POST', `/keys/${keyId}/allotment`, { amount: 1 })
      a.script({ usage: { prompt_tokens: 100, completion_tokens: 100 } })
      expect((await chat(key, { model: 'test/cheap', messages: hi })).status).toBe(200)
      expect((await suite.harness.admin('GET', `/keys/${keyId}`)).json.allotment.balance).toBe(1.001 - 300 / 1e6)
      expect((await wallet(accountId)).balance).toBe(50)

      const token = await idp.token({ sub: 'payer-user' })
      expectError(await chat(token, { model: 'test/cheap', messages: hi }), 402, 'insufficient_balance')
      await suite.harness.admin('POST', '/users/credits', { iss: idp.issuer, sub: 'payer-user', amount: 2 })
      a.script({ usage: { prompt_tokens: 100, completion_tokens: 100 } })
      expect((await chat(token, { model: 'test/cheap', messages: hi })).status).toBe(200)
      const allotment = await suite.harness.admin('GET', `/users/allotment?iss=${encodeURIComponent(idp.issuer)}&sub=payer-user`)
      expect(allotment.json).toEqual({
        balance: 2 - 300 / 1e6,
        held: 0,
        available: 2 - 300 / 1e6,
        quotas: { day: null, week: null, month: null },
        quotas_from: null,
        spent: { day: 300 / 1e6, week: 300 / 1e6, month: 300 / 1e6 },
      })
      expect((await ledger('user_sub=payer-user')).some((entry) => entry.kind === 'charge' && entry.payer.type === 'user_allotment')).toBe(true)
    })

    test('failover: a 5xx, a refused connection or a timeout moves on; billed once', async () => {
      const { key, id: keyId } = await suite.harness.key()
      a.script({ kind: 'error', status: 503 })
      b.script({ usage: { prompt_tokens: 10, completion_tokens: 10 } })
      const served = await chat(key, { model: 'test/smart', messages: hi })
      expect(served.status).toBe(200)
      expect(b.received[0]!.body.model).toBe('smart-b')
      expect((await ledger(`key_id=${keyId}`)).filter((entry) => entry.kind === 'charge')).toMatchObject([{ route: 'b', amount: (10 * 3 + 10 * 15) / 1e6 }])

      b.script({})
      expect((await chat(key, { model: 'test/fragile', messages: hi })).status).toBe(200)
      a.script({ kind: 'hang' })
      b.script({})
      expect((await chat(key, { model: 'test/slow', messages: hi })).status).toBe(200)
      expect(b.received.map((request) => request.body.model)).toEqual(['smart-b', 'fragile-b', 'slow-b'])
    })

    test('a client-fault 4xx comes back as is, is not billed, and is not retried elsewhere', async () => {
      const { key, accountId } = await suite.harness.key()
      a.script({
        kind: 'error',
        status: 400,
        body: { error: { message: 'context too long', type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
      })
      const reply = await chat(key, { model: 'test/smart', messages: hi })
      expectError(reply, 400, 'context_length_exceeded')
      expect(reply.json.error).toMatchObject({ message: 'context too long', param: 'messages' })
      expect(b.received).toHaveLength(0)
      expect(await wallet(accountId)).toEqual({ balance: 100, held: 0, available: 100 })
      // No code, or a number where the code goes (as vLLM writes the status): upstream_error, the message kept.
      for (const code of [null, 400]) {
        a.script({ kind: 'error', status: 400, body: { error: { message: 'bad temperature', type: 'BadRequestError', param: null, code } } })
        const refused = await chat(key, { model: 'test/smart', messages: hi })
        expectError(refused, 400, 'upstream_error')
        expect(refused.json.error).toMatchObject({ message: 'bad temperature', type: 'invalid_request_error' })
      }
    })

    test('every route failing: 502, nothing billed; a timeout on the last route: 504', async () => {
      const { key, accountId, id: keyId } = await suite.harness.key()
      a.script({ kind: 'error', status: 500 })
      b.script({ kind: 'error', status: 529 })
      expectError(await chat(key, { model: 'test/smart', messages: hi }), 502, 'upstream_error')
      b.script({ kind: 'error', status: 500 })
      a.script({ kind: 'hang' })
      expectError(await chat(key, { model: 'test/timeout', messages: hi, stream: true }), 504, 'upstream_timeout')
      expect(await wallet(accountId)).toEqual({ balance: 100, held: 0, available: 100 })
      const kinds = (await ledger(`key_id=${keyId}`)).map((entry) => entry.kind)
      expect(kinds.filter((kind) => kind === 'charge')).toHaveLength(0)
      expect(kinds.filter((kind) => kind === 'hold')).toHaveLength(kinds.filter((kind) => kind === 'release').length)
    })

    test('smart aliases fall back in order and bill at the price of the model that served', async () => {
      const { key, id: keyId } = await suite.harness.key()
      a.script({ kind: 'error', status: 500 }, { usage: { prompt_tokens: 10, completion_tokens: 10 } })
      b.script({ kind: 'error', status: 500 })
      const reply = await chat(key, { model: 'tollgate/best', messages: hi })
      expect(reply.status).toBe(200)
      expect(reply.json.model).toBe('test/cheap')
      expect(a.received.map((request) => request.body.model)).toEqual(['smart-a', 'cheap-upstream'])
      expect(reply.json.usage.cost).toBe((10 * 1 + 10 * 2) / 1e6)
      expect((await ledger(`key_id=${keyId}`)).find((entry) => entry.kind === 'charge')).toMatchObject({ model: 'test/cheap' })
    })

    test('custom models: system prompt and defaults applied, base price billed, private to their account', async () => {
      const { key, accountId } = await suite.harness.key()
      await suite.harness.admin('POST', '/custom-models', {
        account_id: accountId,
        name: 'pirate',
        base_model: 'test/cheap',
        system: 'Talk like a pirate.',
        defaults: { temperature: 0.1, max_tokens: 50 },
      })
      a.script({ usage: { prompt_tokens: 20, completion_tokens: 5 } })
      const reply = await chat(key, { model: 'custom/pirate', messages: hi, max_tokens: 80 })
      expect(reply.status).toBe(200)
      expect(reply.json.usage.cost).toBe((20 + 10) / 1e6)
      expect(a.received[0]!.body).toMatchObject({
        model: 'cheap-upstream',
        temperature: 0.1,
        max_tokens: 80,
        messages: [{ role: 'system', content: 'Talk like a pirate.' }, ...hi],
      })
      const stranger = await suite.harness.key()
      expectError(await chat(stranger.key, { model: 'custom/pirate', messages: hi }), 404, 'model_not_found')
    })

    test('a stream the client abandons is billed for what was streamed, the rest released', async () => {
      const { key, accountId, id: keyId } = await suite.harness.key()
      a.script({ text: 'a b c d e f g h i j k l m n o p', chunkDelayMs: 30, usage: { prompt_tokens: 5, completion_tokens: 16 } })
      const response = await suite.harness.gateway.handle(
        new Request('http://localhost/v1/chat/completions', {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'test/cheap', messages: hi, stream: true }),
        }),
      )
      const reader = response.body!.getReader()
      await reader.read()
      await reader.read()
      await reader.cancel()
      // Settlement happens as the stream is cancelled; give the batch a moment to commit.
      for (let i = 0; i < 50 && (await wallet(accountId)).held !== 0; i++) await Bun.sleep(20)
      const after = await wallet(accountId)
      expect(after.held).toBe(0)
      const charge = (await ledger(`key_id=${keyId}`)).find((entry) => entry.kind === 'charge')
      expect(charge.usage.source).toBe('estimate')
      expect(charge.usage.output_tokens).toBeGreaterThan(0)
      expect(charge.usage.output_tokens).toBeLessThan(16)
      expect(after.balance).toBeCloseTo(100 - charge.amount, 6)
    })

    test('a stream the upstream cuts ends with an error chunk, no [DONE], and is not billed', async () => {
      const { key, accountId } = await suite.harness.key()
      a.script({ text: 'a b c d e', cutAfterChunks: 2 })
      const reply = await chat(key, { model: 'test/cheap', messages: hi, stream: true })
      const data = dataOf(reply.text)
      expect(data).not.toContain('[DONE]')
      expect(JSON.parse(data.at(-1)!).error).toMatchObject({ code: 'upstream_error' })
      expect(await wallet(accountId)).toEqual({ balance: 100, held: 0, available: 100 })
    })

    test('validation: 400 invalid_request naming the field', async () => {
      const { key } = await suite.harness.key()
      const checks: [object, string][] = [
        [{ messages: hi }, 'model'],
        [{ model: 'test/cheap' }, 'messages'],
        [{ model: 'test/cheap', messages: [] }, 'messages'],
        [{ model: 'test/cheap', messages: hi, temperature: 2.5 }, 'temperature'],
        [{ model: 'test/cheap', messages: hi, top_p: -0.1 }, 'top_p'],
        [{ model: 'test/cheap', messages: hi, max_tokens: 0 }, 'max_tokens'],
        [{ model: 'test/cheap', messages: hi, stop: 7 }, 'stop'],
        [{ model: 'test/cheap', messages: hi, stream: 'yes' }, 'stream'],
        [{ model: 'test/cheap', messages: [{ role: 'user' }] }, 'messages[0].content'],
        // null content belongs only to an assistant turn that called tools.
        [{ model: 'test/cheap', messages: [{ role: 'user', content: null }] }, 'messages[0].content'],
        [
          { model: 'test/cheap', messages: [{ role: 'system', content: 'Be brief.' }, ...hi, { role: 'assistant', content: null }, ...hi] },
          'messages[2].content',
        ],
        [
          {
            model: 'test/cheap',
            messages: [...hi, { role: 'assistant', content: 'ok', tool_calls: [] }, { role: 'tool', tool_call_id: 'call_1', content: null }],
          },
          'messages[2].content',
        ],
        [{ model: 'test/cheap', messages: [{ role: 'system', content: null }, ...hi] }, 'messages[0].content'],
      ]
      for (const [body, param] of checks) {
        const reply = await chat(key, body)
        expectError(reply, 400, 'invalid_request')
        expect(reply.json.error.param).toBe(param)
      }
      expect((await chat(key, { model: 'test/cheap', messages: [{ role: 'assistant', content: null, tool_calls: [] }, ...hi] })).status).toBe(200)
      const toolTurn = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }
      const toolResult = { role: 'tool', tool_call_id: 'call_1', content: '42' }
      expect((await chat(key, { model: 'test/cheap', messages: [...hi, toolTurn, toolResult] })).status).toBe(200)
      // The same on a translated route: the tool call goes upstream, the empty content does not.
      a.reset()
      expect((await chat(key, { model: 'anthropic/claude-test', messages: [...hi, toolTurn, toolResult] })).status).toBe(200)
      expect(a.received[0]!.body.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'f', input: {} }] })
      // An embedding model is not served here, whatever its routes could do.
      a.reset()
      expectError(await chat(key, { model: 'test/embed', messages: hi }), 400, 'model_not_supported')
      expect(a.received).toHaveLength(0)
    })

    test('anthropic models on chat completions: translated to the messages API and back, billed with cache prices', async () => {
      const { key, accountId } = await suite.harness.key()
      a.script({ text: 'Bonjour!', usage: { prompt_tokens: 100, completion_tokens: 10, cached_tokens: 50 } })
      const reply = await chat(key, { model: 'anthropic/claude-test', messages: [{ role: 'system', content: 'French.' }, ...hi], max_tokens: 64 })
      expect(reply.status).toBe(200)
      const sent = a.received[0]!
      expect(sent.path).toBe('/v1/messages')
      expect(sent.headers['x-api-key']).toBe('sk-ant-a')
      expect(sent.body).toEqual({
        model: 'claude-test-a',
        system: 'French.',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hi.' }] }],
        max_tokens: 64,
      })
      const cost = (100 * 3 + 50 * 0.3 + 10 * 15) / 1e6
      expect(reply.json).toMatchObject({
        object: 'chat.completion',
        model: 'anthropic/claude-test',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Bonjour!' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 150, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 50 }, cost },
      })
      expect((await wallet(accountId)).balance).toBeCloseTo(100 - cost, 6)
    })

    test('anthropic models on chat completions without max_tokens: the model maximum goes upstream, as the hold assumed', async () => {
      const { key, id: keyId } = await suite.harness.key()
      for (const stream of [false, true]) {
        a.reset()
        a.script({ text: 'Bonjour!', usage: { prompt_tokens: 10, completion_tokens: 2 } })
        expect((await chat(key, { model: 'anthropic/claude-test', messages: hi, stream })).status).toBe(200)
        expect(a.received[0]!.body.max_tokens).toBe(1000)
      }
      // The hold covered the same 1000 tokens at the output price (15 per million), plus the input estimate.
      const holds = (await ledger(`key_id=${keyId}`)).filter((entry) => entry.kind === 'hold')
      expect(holds).toHaveLength(2)
      for (const hold of holds) expect(hold.amount - (1000 * 15) / 1e6).toBeWithin(0, 0.001)
    })

    test('anthropic models on chat completions, streaming a tool call, usage chunk when asked', async () => {
      const { key } = await suite.harness.key()
      a.script({
        text: 'Let me see.',
        toolCalls: [{ id: 'toolu_5', name: 'get_weather', arguments: '{"city":"Lima"}' }],
        usage: { prompt_tokens: 30, completion_tokens: 8 },
      })
      const reply = await chat(key, {
        model: 'anthropic/claude-test',
        messages: hi,
        stream: true,
        stream_options: { include_usage: true },
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      })
      const data = dataOf(reply.text)
      expect(data.at(-1)).toBe('[DONE]')
      const chunks = data.slice(0, -1).map((line) => JSON.parse(line))
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Let me see.')
      const args = chunks
        .flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? [])
        .map((call: any) => call.function.arguments)
        .join('')
      expect(args).toBe('{"city":"Lima"}')
      expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls')
      expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 8, cost: (30 * 3 + 8 * 15) / 1e6 })
    })
  })
}
