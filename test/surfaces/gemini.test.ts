import { beforeEach, describe, expect, test } from 'bun:test'
import { recordOf } from '../support/activity'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/** The Gemini API surface (docs/api.md#gemini-api): Google's wire format in and out, billed like chat. */

const hi = { contents: [{ role: 'user', parts: [{ text: 'Say hi.' }] }] }

/** The `data:` events of an alt=sse stream, parsed. */
function chunksOf(text: string): any[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => JSON.parse(block.replace(/^data: /, '')))
}

for (const kind of testDatabases) {
  describe(`Gemini API (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { secondUpstream: true })
    const a = suite.upstream
    const b = suite.secondUpstream
    beforeEach(() => {
      a.reset()
      b.reset()
    })

    const call = (key: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
      suite.harness.call('POST', `/v1beta/models/${path}`, { headers: { 'x-goog-api-key': key, ...headers }, body })
    const balance = async (accountId: string) => (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet.balance as number

    test('generateContent on a gemini route: the body passes through, the model maximum sent as maxOutputTokens, exact cost in usageMetadata', async () => {
      const { key, accountId } = await suite.harness.key()
      const before = await balance(accountId)
      a.script({ text: 'Hi there', usage: { prompt_tokens: 100, completion_tokens: 20 } })
      const reply = await call(key, 'google/gemini-test:generateContent', {
        ...hi,
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        generationConfig: {
          temperature: 0.5,
          topP: 0.9,
          stopSequences: ['END'],
          thinkingConfig: { thinkingBudget: 128 },
          responseMimeType: 'application/json',
        },
        safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      })
      expect(reply.status).toBe(200)
      const sent = a.received[0]!
      expect(sent.path).toBe('/v1beta/models/gemini-test-a:generateContent')
      expect(sent.headers['x-goog-api-key']).toBe('gemini-key-a')
      expect(sent.body).toMatchObject({
        contents: [{ role: 'user', parts: [{ text: 'Say hi.' }] }],
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        generationConfig: {
          temperature: 0.5,
          topP: 0.9,
          stopSequences: ['END'],
          maxOutputTokens: 1000,
          thinkingConfig: { thinkingBudget: 128 },
          responseMimeType: 'application/json',
        },
        safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      })
      // google/gemini-test: input 0.3, output 2.5 per million tokens: 30 + 50 micro-credits.
      const cost = 80 / 1e6
      expect(reply.json.candidates).toEqual([{ content: { role: 'model', parts: [{ text: 'Hi there' }] }, finishReason: 'STOP', index: 0 }])
      expect(reply.json.usageMetadata).toEqual({ promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120, cost })
      expect(reply.json.modelVersion).toBe('google/gemini-test')
      expect(reply.headers.get('x-tollgate-cost')).toBe(String(cost))
      expect(await balance(accountId)).toBeCloseTo(before - cost, 6)
      // The call is in the operator's request activity like any billed call.
      const record = await recordOf(suite.harness, reply.headers.get('x-request-id'))
      expect(record).toMatchObject({ status: 200, route: '/v1beta/models/*', model: 'google/gemini-test', cost, tokens: { input: 100, output: 20 } })
    })

    test('the model: bare name after the vendor prefix, %2F, models/ prefix; credentials: ?key=, Bearer', async () => {
      const { key } = await suite.harness.key()
      for (const [path, headers, query] of [
        ['gemini-test:generateContent', {}, ''],
        ['google%2Fgemini-test:generateContent', {}, ''],
        ['google/gemini-test:generateContent', {}, ''],
        ['models/gemini-test:generateContent', {}, ''],
        ['gemini-test:generateContent', { 'x-goog-api-key': '' }, `?key=${key}`],
        ['gemini-test:generateContent', { 'x-goog-api-key': '', ...bearer(key) }, ''],
      ] as const) {
        const sentHeaders: Record<string, string> = Object.fromEntries(
          Object.entries({ 'x-goog-api-key': key, ...headers }).filter(([, value]) => value !== ''),
        )
        const reply = await suite.harness.call('POST', `/v1beta/models/${path}${query}`, { headers: sentHeaders, body: hi })
        // The answer names the gateway model however the path named it.
        expect({ path, query, status: reply.status, model: reply.json?.modelVersion }).toEqual({ path, query, status: 200, model: 'google/gemini-test' })
      }
    })

    test('streamGenerateContent?alt=sse: Google chunks, the last with the finish reason and usage with the cost', async () => {
      const { key, accountId } = await suite.harness.key()
      const before = await balance(accountId)
      a.script({ text: 'one two three', usage: { prompt_tokens: 100, completion_tokens: 20 } })
      const reply = await suite.harness.call('POST', '/v1beta/models/gemini-test:streamGenerateContent?alt=sse', {
        headers: { 'x-goog-api-key': key },
        body: hi,
      })
      expect(reply.status).toBe(200)
      expect(reply.headers.get('content-type')).toContain('text/event-stream')
      expect(a.received[0]!.path).toBe('/v1beta/models/gemini-test-a:streamGenerateContent')
      const chunks = chunksOf(reply.text)
      const text = chunks.flatMap((chunk) => chunk.candidates[0].content.parts.map((part: { text?: string }) => part.text ?? '')).join('')
      expect(text).toBe('one two three')
      const last = chunks.at(-1)
      expect(last.candidates[0].finishReason).toBe('STOP')
      expect(last.usageMetadata).toEqual({ promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120, cost: 80 / 1e6 })
      // Passed through as Google sent them (cumulative usage on each), each naming the gateway model.
      expect(chunks.every((chunk) => chunk.modelVersion === 'google/gemini-test' && chunk.responseId === last.responseId)).toBe(true)
      expect(await balance(accountId)).toBeCloseTo(before - 80 / 1e6, 6)
    })

    test('a native stream the upstream breaks ends with Google envelope as its last event, unbilled; the held last chunk is never sent', async () => {
      const { key, accountId } = await suite.harness.key()
      const before = await balance(accountId)
      a.script({ text: 'one two three four', cutAfterChunks: 2 })
      const reply = await suite.harness.call('POST', '/v1beta/models/gemini-test:streamGenerateContent?alt=sse', {
        headers: { 'x-goog-api-key': key },
        body: hi,
      })
      expect(reply.status).toBe(200)
      const chunks = chunksOf(reply.text)
      const last = chunks.at(-1)
      expect(last.error).toMatchObject({ code: 502, status: 'INTERNAL', details: [{ reason: 'upstream_error', domain: 'tollgate' }] })
      expect(chunks.slice(0, -1).every((chunk) => chunk.candidates[0].finishReason === undefined)).toBe(true)
      expect(await balance(accountId)).toBe(before)
    })

    test('a native stream the client abandons is billed for what was streamed, the rest released', async () => {
      const { key, accountId, id: keyId } = await suite.harness.key()
      const before = await balance(accountId)
      a.script({ text: 'a b c d e f g h i j k l m n o p', chunkDelayMs: 30, usage: { prompt_tokens: 5, completion_tokens: 16 } })
      const response = await suite.harness.gateway.handle(
        new Request('http://localhost/v1beta/models/gemini-test:streamGenerateContent?alt=sse', {
          method: 'POST',
          headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify(hi),
        }),
      )
      const reader = response.body!.getReader()
      await reader.read()
      await reader.read()
      await reader.cancel()
      const wallet = async () => (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
      // Settlement happens as the stream is cancelled; give the batch a moment to commit.
      for (let i = 0; i < 50 && (await wallet()).held !== 0; i++) await Bun.sleep(20)
      expect((await wallet()).held).toBe(0)
      const charge = (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.find((entry: { kind: string }) => entry.kind === 'charge')
      expect(charge.usage.source).toBe('estimate')
      expect(charge.usage.output_tokens).toBeGreaterThan(0)
      expect(charge.usage.output_tokens).toBeLessThan(16)
      expect(await balance(accountId)).toBeCloseTo(before - charge.amount, 6)
    })

    test('streamGenerateContent without alt=sse: a JSON array of responses', async () => {
      const { key } = await suite.harness.key()
      a.script({ text: 'Hello', usage: { prompt_tokens: 100, completion_tokens: 20 } })
      const reply = await call(key, 'gemini-test:streamGenerateContent', hi)
      expect(reply.status).toBe(200)
      expect(Array.isArray(reply.json)).toBe(true)
      expect(reply.json[0].candidates[0].content.parts).toEqual([{ text: 'Hello' }])
      expect(reply.json.at(-1).usageMetadata.cost).toBe(80 / 1e6)
    })

    test('an OpenAI-format route, translated: function declarations, a call and its response round-trip; the call comes back as functionCall', async () => {
      const { key, accountId } = await suite.harness.key()
      const before = await balance(accountId)
      a.script({ toolCalls: [{ id: 'call_9', name: 'get_weather', arguments: '{"city":"Lima"}' }], usage: { prompt_tokens: 100, completion_tokens: 20 } })
      const tools = [
        { functionDeclarations: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] },
      ]
      const image = { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }
      const reply = await call(key, 'test/cheap:generateContent', {
        contents: [{ role: 'user', parts: [{ text: 'Say hi.' }, image] }],
        // A system instruction's role means nothing; some clients write "system".
        systemInstruction: { role: 'system', parts: [{ text: 'Be brief.' }] },
        tools,
        generationConfig: { maxOutputTokens: 300 },
      })
      expect(reply.status).toBe(200)
      const sent = a.received[0]!
      expect(sent.path).toBe('/v1/chat/completions')
      expect(sent.body).toMatchObject({ model: 'cheap-upstream', max_tokens: 300, tools: [{ type: 'function', function: { name: 'get_weather' } }] })
      expect(sent.body.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Say hi.' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ])
      expect(reply.json.candidates[0].content.parts).toEqual([{ functionCall: { id: 'call_9', name: 'get_weather', args: { city: 'Lima' } } }])
      // test/cheap: input 1, output 2 per million tokens.
      expect(reply.json.usageMetadata.cost).toBe(140 / 1e6)
      expect(await balance(accountId)).toBeCloseTo(before - 140 / 1e6, 6)

      a.script({ text: 'Sunny.' })
      const second = await call(key, 'test/cheap:generateContent', {
        contents: [
          ...hi.contents,
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Lima' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { forecast: 'sunny' } } }] },
        ],
        tools,
      })
      expect(second.status).toBe(200)
      const messages = a.received[1]!.body.messages
      const callId = messages[1].tool_calls[0].id
      expect(messages[1].tool_calls[0].function).toMatchObject({ name: 'get_weather', arguments: '{"city":"Lima"}' })
      expect(messages[2]).toMatchObject({ role: 'tool', tool_call_id: callId })
      expect(JSON.parse(messages[2].content)).toEqual({ forecast: 'sunny' })
      expect(second.json.candidates[0].content.parts).toEqual([{ text: 'Sunny.' }])
    })

    test('a translated stream on an Anthropic route: thinking as thought parts, text, and the cost at the end', async () => {
      const { key, accountId } = await suite.harness.key()
      const before = await balance(accountId)
      a.script({ thinking: { text: 'Let me see.', signature: 'sig-1' }, text: 'a b', usage: { prompt_tokens: 100, completion_tokens: 20 } })
      const reply = await suite.harness.call('POST', '/v1beta/models/anthropic%2Fclaude-test:streamGenerateContent?alt=sse', {
        headers: { 'x-goog-api-key': key },
        body: { ...hi, generationConfig: { maxOutputTokens: 200 } },
      })
      expect(reply.status).toBe(200)
      expect(a.received[0]).toMatchObject({ path: '/v1/messages', body: { model: 'claude-test-a', max_tokens: 200, stream: true } })
      const chunks = chunksOf(reply.text)
      const parts = chunks.flatMap((chunk) => chunk.candidates[0].content.parts)
      expect(
        parts
          .filter((part: { thought?: boolean }) => part.thought)
          .map((part: { text: string }) => part.text)
          .join(''),
      ).toBe('Let me see.')
      expect(
        parts
          .filter((part: { thought?: boolean }) => !part.thought)
          .map((part: { text: string }) => part.text)
          .join(''),
      ).toBe('a b')
      // anthropic/claude-test: input 3, output 15 per million tokens.
      expect(chunks.at(-1).usageMetadata).toMatchObject({ promptTokenCount: 100, candidatesTokenCount: 20, cost: 600 / 1e6 })
      expect(await balance(accountId)).toBeCloseTo(before - 600 / 1e6, 6)
    })

    test('countTokens is free; GET /v1beta/models lists chat models as models/<id>; one model is retrieved by its short name', async () => {
      const { key, accountId } = await suite.harness.key()
      const before = await balance(accountId)
      const counted = await call(key, 'gemini-test:countTokens', hi)
      expect(counted.status).toBe(200)
      expect(counted.json.totalTokens).toBeGreaterThan(0)
      const nested = await call(key, 'gemini-test:countTokens', { generateContentRequest: { model: 'models/gemini-test', ...hi } })
      expect(nested.json.totalTokens).toBe(counted.json.totalTokens)
      expect(a.received).toHaveLength(0)
      expect(await balance(accountId)).toBe(before)

      const listed = await suite.harness.call('GET', '/v1beta/models', { headers: { 'x-goog-api-key': key } })
      expect(listed.status).toBe(200)
      const names = listed.json.models.map((model: { name: string }) => model.name)
      expect(names).toContain('models/google/gemini-test')
      expect(names).toContain('models/google/gemini-embed')
      expect(names).not.toContain('models/test/image')
      const one = await suite.harness.call('GET', '/v1beta/models/gemini-test', { headers: { 'x-goog-api-key': key } })
      expect(one.json).toEqual({
        name: 'models/google/gemini-test',
        displayName: 'google/gemini-test',
        outputTokenLimit: 1000,
        supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
      })
      expectError(await suite.harness.call('GET', '/v1beta/models/no-such-model', { headers: { 'x-goog-api-key': key } }), 404, 'model_not_found', 'google')
    })

    test('bad input is a 4xx in Google envelope, never a charge or an upstream call', async () => {
      const { key, accountId } = await suite.harness.key()
      const before = await balance(accountId)
      const cases: [string, unknown, number, string, string?][] = [
        ['no-such-model:generateContent', hi, 404, 'model_not_found'],
        ['gemini-test:generateContent', { contents: 'hi' }, 400, 'invalid_request', 'contents'],
        ['gemini-test:generateContent', { contents: [{ role: 'user', parts: [{ audio: 'x' }] }] }, 400, 'invalid_request', 'contents[0].parts[0]'],
        ['gemini-test:generateContent', { ...hi, generationConfig: { temperature: 'hot' } }, 400, 'invalid_request', 'generationConfig.temperature'],
        ['gemini-test:generateContent', { ...hi, generationConfig: { maxOutputTokens: 1001 } }, 400, 'invalid_request', 'generationConfig.maxOutputTokens'],
        // Structured output is served on Gemini routes only; test/cheap has an OpenAI-format route.
        [
          'test/cheap:generateContent',
          { ...hi, generationConfig: { responseSchema: { type: 'object' } } },
          400,
          'invalid_request',
          'generationConfig.responseSchema',
        ],
        [
          'test/cheap:generateContent',
          { ...hi, generationConfig: { responseMimeType: 'application/json' } },
          400,
          'invalid_request',
          'generationConfig.responseMimeType',
        ],
        ['gemini-test:generateContent', { ...hi, tools: [{ googleSearch: {} }] }, 400, 'invalid_request', 'tools[0].googleSearch'],
        ['gemini-test:generateContent', { ...hi, generationConfig: { candidateCount: 2 } }, 400, 'invalid_request', 'generationConfig.candidateCount'],
        ['gemini-test:generateContent', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 400, 'invalid_request', 'contents[0].role'],
        ['gemini-test:generateContent', { contents: [{ role: 'user', parts: [{ text: 5 }] }] }, 400, 'invalid_request', 'contents[0].parts[0].text'],
        ['gemini-test:generateContent', { contents: [] }, 400, 'invalid_request', 'contents'],
        [
          'gemini-test:generateContent',
          { ...hi, generationConfig: { stopSequences: ['a', 'b', 'c', 'd', 'e', 'f'] } },
          400,
          'invalid_request',
          'stopSequences',
        ],
        ['gemini-test:generateContent', { ...hi, generationConfig: { maxOutputTokens: 0 } }, 400, 'invalid_request', 'generationConfig.maxOutputTokens'],
        ['gemini-test:embedVideo', hi, 404, 'not_found'],
        ['google/gemini-embed:generateContent', hi, 400, 'model_not_supported'],
      ]
      for (const [path, body, status, code, field] of cases) {
        const reply = await call(key, path, body)
        expectError(reply, status, code, 'google')
        if (field) expect({ path, message: reply.json.error.message }).toEqual({ path, message: expect.stringContaining(field) })
      }
      expectError(await call('tollgate_sk_prod_malformed', 'gemini-test:generateContent', hi), 401, 'invalid_api_key', 'google')
      const notJson = await suite.harness.gateway.handle(
        new Request('http://localhost/v1beta/models/gemini-test:generateContent', {
          method: 'POST',
          headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
          body: '{"contents": [',
        }),
      )
      expect({ status: notJson.status, error: ((await notJson.json()) as { error: { status: string } }).error.status }).toEqual({
        status: 400,
        error: 'INVALID_ARGUMENT',
      })
      expectError(await suite.harness.call('POST', '/v1beta/models/gemini-test:generateContent', { body: hi }), 401, 'invalid_api_key', 'google')
      expectError(await call(key, 'gemini-test:generateContent', hi, { 'x-api-key': key, 'x-goog-api-key': '' }), 401, 'invalid_api_key', 'google')
      expect(a.received).toHaveLength(0)
      expect(await balance(accountId)).toBe(before)
    })

    test('embedContent and batchEmbedContents: Google shapes, billed on the estimate like /v1/embeddings; bad batches refused unbilled', async () => {
      const { key, accountId } = await suite.harness.key({ scopes: ['embeddings'] })
      const before = await balance(accountId)
      const one = await call(key, 'gemini-embed:embedContent', { content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 3 })
      expect(one.status).toBe(200)
      expect(a.received[0]).toMatchObject({ path: '/v1beta/models/gemini-embed-a:batchEmbedContents' })
      expect(a.received[0]!.body.requests).toEqual([{ model: 'models/gemini-embed-a', content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 3 }])
      expect(one.json.embedding.values.length).toBeGreaterThan(0)
      const first = one.json.usageMetadata
      expect(first.promptTokenCount).toBeGreaterThan(0)
      // google/gemini-embed: input 0.15 per million tokens, rounded up to a whole micro-credit.
      expect(first.cost).toBe(Math.ceil(first.promptTokenCount * 0.15) / 1e6)

      const batch = await call(key, 'google%2Fgemini-embed:batchEmbedContents', {
        requests: ['a', 'b'].map((text) => ({ model: 'models/gemini-embed', content: { parts: [{ text }] } })),
      })
      expect(batch.status).toBe(200)
      expect(batch.json.embeddings).toHaveLength(2)
      // The mock scales each vector by its position: the order is kept.
      expect(batch.json.embeddings[1].values[0]).toBeCloseTo(batch.json.embeddings[0].values[0] * 2, 6)
      expect(await balance(accountId)).toBeCloseTo(before - first.cost - batch.json.usageMetadata.cost, 6)

      const upstreamCalls = a.received.length
      const charged = await balance(accountId)
      for (const [body, field] of [
        [{ requests: [] }, 'requests'],
        [{ requests: [{ model: 'models/other', content: { parts: [{ text: 'x' }] } }] }, 'requests[0].model'],
        [{ requests: [{ content: { parts: [{ inlineData: { mimeType: 'image/png', data: '' } }] } }] }, 'requests[0].content.parts[0]'],
      ] as const) {
        const reply = await call(key, 'gemini-embed:batchEmbedContents', body)
        expectError(reply, 400, 'invalid_request', 'google')
        expect(reply.json.error.message).toContain(field)
      }
      expectError(await call(key, 'gemini-embed:embedContent', {}), 400, 'invalid_request', 'google')
      expectError(await call(key, 'gemini-test:embedContent', { content: { parts: [{ text: 'x' }] } }), 400, 'model_not_supported', 'google')
      expectError(await call(key, 'gemini-test:generateContent', hi), 403, 'insufficient_scope', 'google')
      expect(a.received.length).toBe(upstreamCalls)
      expect(await balance(accountId)).toBe(charged)
    })

    test('failover: a route that fails moves to the next; an Idempotency-Key retry is answered once, charged once, and not for another model', async () => {
      const { key, accountId } = await suite.harness.key()
      const before = await balance(accountId)
      a.script({ kind: 'error', status: 503 })
      b.script({ text: 'From b.', usage: { prompt_tokens: 100, completion_tokens: 20 } })
      const headers = { 'idempotency-key': 'gemini-retry-1' }
      const first = await call(key, 'claude-test:generateContent', hi, headers)
      expect(first.status).toBe(200)
      expect(first.json.candidates[0].content.parts).toEqual([{ text: 'From b.' }])
      expect(b.received[0]).toMatchObject({ path: '/v1/messages', body: { model: 'claude-test-b' } })
      const again = await call(key, 'claude-test:generateContent', hi, headers)
      expect(again.json).toEqual(first.json)
      expect(a.received.length + b.received.length).toBe(2)
      // anthropic/claude-test: input 3, output 15 per million tokens.
      expect(await balance(accountId)).toBeCloseTo(before - 600 / 1e6, 6)
      a.script({ text: 'Other model.', usage: { prompt_tokens: 100, completion_tokens: 20 } })
      const other = await call(key, 'gemini-test:generateContent', hi, headers)
      expect(other.json.candidates[0].content.parts).toEqual([{ text: 'Other model.' }])
    })

    test('a key without the chat scope is refused; an upstream error is answered in Google envelope and not billed', async () => {
      const embeddingsOnly = await suite.harness.key({ scopes: ['embeddings'] })
      expectError(await call(embeddingsOnly.key, 'gemini-test:generateContent', hi), 403, 'insufficient_scope', 'google')
      const { key, accountId } = await suite.harness.key()
      const before = await balance(accountId)
      a.script({ kind: 'error', status: 400, body: { error: { code: 400, message: 'bad thing', status: 'INVALID_ARGUMENT' } } })
      const reply = await call(key, 'gemini-test:generateContent', hi)
      expect(reply.status).toBe(400)
      expect(reply.json.error.status).toBe('INVALID_ARGUMENT')
      expect(reply.json.error.details[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', domain: 'tollgate' })
      expect(await balance(accountId)).toBe(before)
    })
  })
}
