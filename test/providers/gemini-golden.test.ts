import { beforeEach, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { convertPromptToGemini } from '../../src/providers/gemini/convert-request'
import { decodeChatRequest } from '../../src/surfaces/chat-completions/decode'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

describe('chat request -> generateContent (golden)', () => {
  test('system, turns, tool calls answered by name, images, generation config, tool choice', () => {
    const body = convertPromptToGemini(
      decodeChatRequest({
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather here?' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_0', content: '3C' },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        temperature: 0.2,
        max_tokens: 50,
        stop: ['END'],
      }),
    )
    expect(body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Weather here?' }, { inlineData: { mimeType: 'image/jpeg', data: 'AAAA' } }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: '3C' } } }] },
      ],
      systemInstruction: { role: 'user', parts: [{ text: 'Be brief.' }] },
      generationConfig: { temperature: 0.2, maxOutputTokens: 50, stopSequences: ['END'] },
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object' } }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    })
  })
})

describe('Gemini models on chat completions', () => {
  const suite = gatewaySuite(testDatabases[0]!)
  const upstream = suite.upstream
  beforeEach(() => upstream.reset())

  const hi: { role: 'user'; content: string }[] = [{ role: 'user', content: 'Say hi.' }]

  test('generateContent with the provider key; usage with cached tokens becomes the exact cost', async () => {
    const { key } = await suite.harness.key()
    upstream.script({ text: 'Hi from Gemini.', usage: { prompt_tokens: 1000, completion_tokens: 20, cached_tokens: 400 } })
    const reply = await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'google/gemini-test', messages: hi } })
    expect(reply.status).toBe(200)
    const sent = upstream.received[0]!
    expect(sent.path).toBe('/v1beta/models/gemini-test-a:generateContent')
    expect(sent.headers['x-goog-api-key']).toBe('gemini-key-a')
    const cost = Math.ceil(600 * 0.3 + 400 * 0.03 + 20 * 2.5) / 1e6
    expect(reply.json).toMatchObject({
      object: 'chat.completion',
      model: 'google/gemini-test',
      choices: [{ message: { role: 'assistant', content: 'Hi from Gemini.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1000, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 400 }, cost },
    })
  })

  test('streaming through the official client, with a function call', async () => {
    const { key } = await suite.harness.key()
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: suite.harness.gateway.handle })
    try {
      const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${server.port}/v1`, maxRetries: 0 })
      upstream.script({ text: 'one two three', usage: { prompt_tokens: 10, completion_tokens: 3 } })
      let text = ''
      for await (const chunk of await client.chat.completions.create({ model: 'google/gemini-test', messages: hi, stream: true }))
        text += chunk.choices[0]?.delta.content ?? ''
      expect(text).toBe('one two three')
      expect(upstream.received[0]!.path).toBe('/v1beta/models/gemini-test-a:streamGenerateContent')
      expect(upstream.received[0]!.query).toBe('?alt=sse')

      upstream.script({ toolCalls: [{ id: 'ignored', name: 'get_weather', arguments: '{"city":"Oslo"}' }] })
      const final = await client.chat.completions
        .stream({ model: 'google/gemini-test', messages: hi, tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }] })
        .finalChatCompletion()
      expect(final.choices[0]!.finish_reason).toBe('tool_calls')
      expect(final.choices[0]!.message.tool_calls?.[0]).toMatchObject({ id: 'call_0', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } })
    } finally {
      server.stop(true)
    }
  })

  test('a Google client error keeps its status; a broken stream is not billed', async () => {
    const { key, accountId } = await suite.harness.key()
    upstream.script({ kind: 'error', status: 400 })
    expectError(
      await suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(key), body: { model: 'google/gemini-test', messages: hi } }),
      400,
      'invalid_argument',
    )
    upstream.script({ text: 'a b c d', cutAfterChunks: 2 })
    const cut = await suite.harness.call('POST', '/v1/chat/completions', {
      headers: bearer(key),
      body: { model: 'google/gemini-test', messages: hi, stream: true },
    })
    expect(cut.text).toContain('"upstream_error"')
    expect(cut.text).not.toContain('[DONE]')
    expect((await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet).toEqual({ balance: 100, held: 0, available: 100 })
  })
})
