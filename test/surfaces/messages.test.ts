import { beforeEach, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

const hi = [{ role: 'user', content: 'Say hi.' }]

/** The events of a streamed reply: [event name, parsed data]. */
function eventsOf(text: string): [string, any][] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const name = /^event: (.*)$/m.exec(block)?.[1] ?? ''
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? 'null'
      return [name, JSON.parse(data)]
    })
}

for (const kind of testDatabases) {
  describe(`messages, native routes (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { secondUpstream: true })
    const a = suite.upstream
    const b = suite.secondUpstream
    beforeEach(() => {
      a.reset()
      b.reset()
    })

    const messages = (key: string, body: object, headers: Record<string, string> = {}, query = '') =>
      suite.harness.call('POST', `/v1/messages${query}`, { headers: { 'x-api-key': key, ...headers }, body })
    const wallet = async (accountId: string) => (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet

    test('the body passes through; the provider key, version, beta header and query go upstream; the cost is exact', async () => {
      const { key, accountId } = await suite.harness.key()
      a.script({ text: 'Hi!', usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 1000, cache_write_tokens: 50, web_search_requests: 2 } })
      const thinking = { type: 'enabled', budget_tokens: 1024 }
      const history = [
        ...hi,
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'sig-123' },
            { type: 'text', text: 'Hello' },
          ],
        },
        ...hi,
      ]
      const reply = await messages(
        key,
        {
          model: 'anthropic/claude-test',
          max_tokens: 500,
          messages: history,
          thinking,
          speed: 'fast',
          metadata: { user_id: 'u1' },
          tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
        },
        { 'anthropic-beta': 'token-efficient-tools-2025-02-19', 'anthropic-version': '2026-10-21' },
        '?beta=true',
      )
      expect(reply.status).toBe(200)
      const sent = a.received[0]!
      expect(sent).toMatchObject({ path: '/v1/messages', query: '?beta=true' })
      expect(sent.headers).toMatchObject({ 'x-api-key': 'sk-ant-a', 'anthropic-version': '2026-10-21', 'anthropic-beta': 'token-efficient-tools-2025-02-19' })
      expect(sent.headers.authorization).toBeUndefined()
      expect(sent.body).toMatchObject({ model: 'claude-test-a', thinking, metadata: { user_id: 'u1' }, messages: history })
      expect(sent.body.speed).toBeUndefined()

      // Token charges in micro-credits: 300 + 300 + 187.5 + 300, rounded up once; searches 0.01 each.
      const cost = (Math.ceil(100 * 3 + 1000 * 0.3 + 50 * 3.75 + 20 * 15) + 2 * 10_000) / 1e6
      expect(cost).toBe(0.021088)
      expect(reply.json).toMatchObject({ type: 'message', model: 'anthropic/claude-test', content: [{ type: 'text', text: 'Hi!' }] })
      expect(reply.json.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 1000, cost })
      expect((await wallet(accountId)).balance).toBeCloseTo(100 - cost, 6)
    })

    test('bare model names mean anthropic/<name>; anthropic-version is optional; Bearer works too', async () => {
      const { key } = await suite.harness.key()
      const reply = await suite.harness.call('POST', '/v1/messages', { headers: bearer(key), body: { model: 'claude-test', max_tokens: 50, messages: hi } })
      expect(reply.status).toBe(200)
      expect(reply.json.model).toBe('claude-test')
      expect(a.received[0]!.headers['anthropic-version']).toBe('2023-06-01')
    })

    test('aliases, custom models and other vendors are refused with model_not_supported', async () => {
      const { key, accountId } = await suite.harness.key()
      await suite.harness.admin('POST', '/custom-models', { account_id: accountId, name: 'mine', base_model: 'anthropic/claude-test' })
      for (const model of ['tollgate/best', 'custom/mine', 'test/cheap']) {
        const reply = await messages(key, { model, max_tokens: 10, messages: hi })
        expectError(reply, 400, 'model_not_supported', 'messages')
        expect(reply.json.error.message).toContain('/v1/chat/completions')
      }
      expectError(await messages(key, { model: 'claude-nothing', max_tokens: 10, messages: hi }), 404, 'model_not_found', 'messages')
      expect(a.received).toHaveLength(0)
    })

    test('validation errors use the messages envelope; max_tokens is required', async () => {
      const { key } = await suite.harness.key()
      const missing = await messages(key, { model: 'claude-test', messages: hi })
      expectError(missing, 400, 'invalid_request', 'messages')
      expect(missing.json.error.type).toBe('invalid_request_error')
      expectError(await messages(key, { model: 'claude-test', max_tokens: 10, messages: 'hi' }), 400, 'invalid_request', 'messages')
    })

    test('streaming keeps the event sequence; the last message_delta carries the cost', async () => {
      const { key, accountId } = await suite.harness.key()
      a.script({ text: 'one two three', usage: { prompt_tokens: 40, completion_tokens: 3 } })
      const reply = await messages(key, { model: 'claude-test', max_tokens: 100, messages: hi, stream: true })
      const events = eventsOf(reply.text)
      expect(events.map(([name]) => name)).toEqual([
        'message_start',
        'content_block_start',
        'ping',
        'content_block_delta',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ])
      expect(events.every(([name, data]) => data.type === name)).toBe(true)
      expect(events[0]![1].message.model).toBe('claude-test')
      const cost = (40 * 3 + 3 * 15) / 1e6
      expect(events[7]![1].usage).toMatchObject({ output_tokens: 3, cost })
      expect((await wallet(accountId)).balance).toBeCloseTo(100 - cost, 6)
    })

    test('thinking blocks and their signatures come back untouched, whole and streamed', async () => {
      const { key } = await suite.harness.key()
      const thinking = { text: 'The user wants a greeting.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pk' }
      a.script({ thinking, text: 'Hi.' }, { thinking, text: 'Hi.' })
      const whole = await messages(key, { model: 'claude-test', max_tokens: 1000, messages: hi, thinking: { type: 'enabled', budget_tokens: 512 } })
      expect(whole.json.content[0]).toEqual({ type: 'thinking', thinking: thinking.text, signature: thinking.signature })
      const streamed = eventsOf(
        (await messages(key, { model: 'claude-test', max_tokens: 1000, messages: hi, stream: true, thinking: { type: 'enabled', budget_tokens: 512 } })).text,
      )
      const deltas = streamed.filter(([name]) => name === 'content_block_delta').map(([, data]) => data.delta)
      expect(deltas.slice(0, 2)).toEqual([
        { type: 'thinking_delta', thinking: thinking.text },
        { type: 'signature_delta', signature: thinking.signature },
      ])
    })

    test('a broken stream ends with event: error and is not billed', async () => {
      const { key, accountId } = await suite.harness.key()
      a.script({ text: 'a b c d', cutAfterChunks: 2 })
      const events = eventsOf((await messages(key, { model: 'claude-test', max_tokens: 100, messages: hi, stream: true })).text)
      expect(events.at(-1)![0]).toBe('error')
      expect(events.at(-1)![1]).toMatchObject({ type: 'error', error: { type: 'api_error', code: 'upstream_error' } })
      expect(await wallet(accountId)).toEqual({ balance: 100, held: 0, available: 100 })
    })

    test('a 529 on the first route fails over to the second: same shape, billed once', async () => {
      const { key, id: keyId } = await suite.harness.key()
      a.script({ kind: 'error', status: 529 })
      b.script({ text: 'from b', usage: { prompt_tokens: 10, completion_tokens: 5 } })
      const reply = await messages(key, { model: 'claude-test', max_tokens: 100, messages: hi })
      expect(reply.status).toBe(200)
      expect(reply.json).toMatchObject({ model: 'claude-test', content: [{ type: 'text', text: 'from b' }] })
      expect(b.received[0]!.headers['x-api-key']).toBe('sk-ant-b')
      const charges = (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.filter((entry: { kind: string }) => entry.kind === 'charge')
      expect(charges).toMatchObject([{ route: 'native-b', amount: (10 * 3 + 5 * 15) / 1e6 }])
    })

    test('an upstream client error keeps its status, type and message, in the messages envelope; its type is not a code', async () => {
      const { key } = await suite.harness.key()
      a.script({ kind: 'error', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long' } } })
      const reply = await messages(key, { model: 'claude-test', max_tokens: 100, messages: hi })
      expectError(reply, 400, 'upstream_error', 'messages')
      expect(reply.json.error).toMatchObject({ type: 'invalid_request_error', message: 'prompt is too long' })
      // The messages surface names the request in Anthropic's header too, errors included.
      expect(reply.headers.get('request-id')).toMatch(/^req/)
      expect(reply.headers.get('request-id')).toBe(reply.headers.get('x-request-id'))
      expect(b.received).toHaveLength(0)
      // The same upstream error on chat completions (a translated route): the OpenAI envelope, the same code.
      a.script({ kind: 'error', status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'model: claude-test-a' } } })
      const chat = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'anthropic/claude-test', messages: hi } })
      expectError(chat, 404, 'upstream_error')
      expect(chat.json.error).toMatchObject({ type: 'not_found_error', message: 'model: claude-test-a' })
      // Only the messages surface speaks Anthropic's header.
      expect(chat.headers.get('request-id')).toBeNull()
      expect(chat.headers.get('x-request-id')).toMatch(/^req/)
      // An upstream that does send a code (another gateway in front of Anthropic) keeps it.
      a.script({
        kind: 'error',
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: 'too long', code: 'context_length_exceeded' } },
      })
      expectError(await messages(key, { model: 'claude-test', max_tokens: 100, messages: hi }), 400, 'context_length_exceeded', 'messages')
    })

    test('the hold covers web searches: max_uses, or the default, at the search price', async () => {
      // 100 output tokens at 15 per million = 0.0015; each search 0.01.
      const { id: accountId } = await suite.harness.account(0.02)
      const { key } = await suite.harness.key({ account_id: accountId })
      const search = (maxUses?: number) => ({ type: 'web_search_20250305', name: 'web_search', ...(maxUses ? { max_uses: maxUses } : {}) })
      expectError(await messages(key, { model: 'claude-test', max_tokens: 100, messages: hi, tools: [search(2)] }), 402, 'insufficient_balance', 'messages')
      expectError(await messages(key, { model: 'claude-test', max_tokens: 100, messages: hi, tools: [search()] }), 402, 'insufficient_balance', 'messages')
      expect(a.received).toHaveLength(0)
      expect((await messages(key, { model: 'claude-test', max_tokens: 100, messages: hi, tools: [search(1)] })).status).toBe(200)
    })

    test('count_tokens: the hold estimate, free, on an empty wallet, messages-format errors', async () => {
      const { id: accountId } = await suite.harness.account(0)
      const { key, id: keyId } = await suite.harness.key({ account_id: accountId })
      const count = (body: object, headers: Record<string, string> = { 'x-api-key': key }) =>
        suite.harness.call('POST', '/v1/messages/count_tokens', { headers, body })
      const short = await count({ model: 'claude-test', messages: hi })
      expect(short.status).toBe(200)
      expect(short.headers.get('request-id')).toBe(short.headers.get('x-request-id'))
      expect(Object.keys(short.json)).toEqual(['input_tokens'])
      const long = await count({ model: 'claude-test', messages: [{ role: 'user', content: 'word '.repeat(1000) }], system: 'Be brief.' })
      expect(long.json.input_tokens).toBeGreaterThan(1000)
      expect(long.json.input_tokens).toBeLessThan(1500)
      expect((await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data).toEqual([])
      expect(a.received).toHaveLength(0)
      const refused = await count({ model: 'claude-test', messages: hi }, { 'x-api-key': 'tollgate_sk_prod_nope' })
      expectError(refused, 401, 'invalid_api_key', 'messages')
      expect(refused.json.error.type).toBe('authentication_error')
      expectError(await count({ model: 'test/cheap', messages: hi }), 400, 'model_not_supported', 'messages')
    })

    test('translated route: a messages request reaches an OpenAI-format upstream and comes back as a message', async () => {
      const { key, accountId } = await suite.harness.key()
      a.script({ text: 'Bonjour.', usage: { prompt_tokens: 30, completion_tokens: 4 } })
      const reply = await messages(key, { model: 'claude-bridge', max_tokens: 200, system: 'Answer in French.', messages: hi, temperature: 0.3 })
      expect(reply.status).toBe(200)
      const sent = a.received[0]!
      expect(sent.path).toBe('/v1/chat/completions')
      expect(sent.headers.authorization).toBe('Bearer sk-upstream-a')
      expect(sent.body).toEqual({
        model: 'bridge-a',
        messages: [
          { role: 'system', content: 'Answer in French.' },
          { role: 'user', content: 'Say hi.' },
        ],
        max_tokens: 200,
        temperature: 0.3,
      })
      const cost = (30 * 2 + 4 * 10) / 1e6
      expect(reply.json).toMatchObject({
        type: 'message',
        role: 'assistant',
        model: 'claude-bridge',
        content: [{ type: 'text', text: 'Bonjour.' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 30, output_tokens: 4, cost },
      })
      expect((await wallet(accountId)).balance).toBeCloseTo(100 - cost, 6)
    })

    test('translated route, streaming a tool call: the native event sequence, billed from the upstream usage', async () => {
      const { key, accountId } = await suite.harness.key()
      a.script({
        text: 'Checking.',
        toolCalls: [{ id: 'call_9', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
        usage: { prompt_tokens: 50, completion_tokens: 12 },
      })
      const reply = await messages(key, {
        model: 'anthropic/claude-bridge',
        max_tokens: 100,
        stream: true,
        messages: hi,
        tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
      })
      const events = eventsOf(reply.text)
      expect(events.map(([name]) => name)).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ])
      expect(events[1]![1].content_block).toEqual({ type: 'tool_use', id: 'call_9', name: 'get_weather', input: {} })
      expect(
        events
          .filter(([name]) => name === 'content_block_delta')
          .map(([, data]) => data.delta.partial_json)
          .join(''),
      ).toBe('{"city":"Oslo"}')
      const cost = (50 * 2 + 12 * 10) / 1e6
      expect(events[5]![1]).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 50, output_tokens: 12, cost } })
      expect((await wallet(accountId)).balance).toBeCloseTo(100 - cost, 6)
    })

    test('failover from a native route to a translated one keeps the message shape', async () => {
      const { key } = await suite.harness.key()
      a.script({ kind: 'error', status: 529 })
      b.script({ text: 'Translated.', usage: { prompt_tokens: 5, completion_tokens: 2 } })
      const reply = await messages(key, { model: 'claude-mixed', max_tokens: 100, messages: hi })
      expect(reply.json).toMatchObject({ type: 'message', model: 'claude-mixed', content: [{ type: 'text', text: 'Translated.' }], stop_reason: 'end_turn' })
      expect(a.received[0]!.path).toBe('/v1/messages')
      expect(b.received[0]!.path).toBe('/v1/chat/completions')
    })
  })
}
