import { beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { testDatabases } from '../support/databases'
import type { TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import type { MockUpstream } from '../upstream/mock-upstream'

/** The official openai npm client, pointed at the gateway over real HTTP, unchanged. */
describe('official openai client', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true, secondUpstream: true })
  let upstream: MockUpstream
  let harness: TestGateway
  let client: OpenAI
  let accountId: string

  beforeAll(async () => {
    ;({ upstream, harness } = served)
    const key = await harness.key()
    accountId = key.accountId
    client = new OpenAI({ apiKey: key.key, baseURL: `${served.origin}/v1`, maxRetries: 0 })
  })

  test('chat.completions.create, non-streaming', async () => {
    upstream.script({ text: 'Hello from the mock.', usage: { prompt_tokens: 12, completion_tokens: 5 } })
    const completion = await client.chat.completions.create({ model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] })
    expect(completion.choices[0]!.message.content).toBe('Hello from the mock.')
    expect(completion.model).toBe('test/cheap')
    expect((completion.usage as unknown as { cost: number }).cost).toBe((12 + 10) / 1e6)
  })

  test('chat.completions.create, streaming, with the usage chunk', async () => {
    upstream.script({ text: 'one two three', usage: { prompt_tokens: 7, completion_tokens: 3 } })
    const stream = await client.chat.completions.create({
      model: 'test/cheap',
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    let text = ''
    let usage: unknown
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      if (chunk.usage) usage = chunk.usage
    }
    expect(text).toBe('one two three')
    expect(usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3, cost: (7 + 6) / 1e6 })
  })

  test('tool calls, streamed and whole', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
    const call = { id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' }
    upstream.script({ toolCalls: [call] }, { toolCalls: [call] })
    const whole = await client.chat.completions.create({ model: 'test/cheap', messages: [{ role: 'user', content: 'weather?' }], tools })
    expect(whole.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ])
    const streamed = client.chat.completions.stream({ model: 'test/cheap', messages: [{ role: 'user', content: 'weather?' }], tools })
    const final = await streamed.finalChatCompletion()
    expect(final.choices[0]!.message.tool_calls?.[0]).toMatchObject({ id: 'call_abc', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } })
    expect(upstream.received.at(-1)!.body.tools).toEqual(tools)
  })

  test('errors surface as the SDK error classes with the gateway code', async () => {
    const poor = await harness.key({ account_id: (await harness.account(0)).id })
    const broke = new OpenAI({ apiKey: poor.key, baseURL: client.baseURL, maxRetries: 0 })
    const error = await broke.chat.completions.create({ model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect(error).toMatchObject({ status: 402, code: 'insufficient_balance' })
    const missing = await client.chat.completions
      .create({ model: 'test/nothing', messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught)
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError)
    const models = await client.models.list()
    expect(models.data.map((model) => model.id)).toContain('test/cheap')
    expect((await client.models.retrieve('test/smart')).id).toBe('test/smart')
  })

  test('an Anthropic model through the same client, translated both ways', async () => {
    upstream.script({ text: 'Hello from the messages API.', usage: { prompt_tokens: 10, completion_tokens: 6 } })
    const stream = client.chat.completions.stream({
      model: 'anthropic/claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      stream_options: { include_usage: true },
    })
    const final = await stream.finalChatCompletion()
    expect(final.choices[0]!.message.content).toBe('Hello from the messages API.')
    expect(final.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 6 })
    expect(upstream.received.at(-1)!.path).toBe('/v1/messages')
  })

  test('billing followed every call', async () => {
    const ledger = (await harness.admin('GET', `/ledger?account_id=${accountId}`)).json.data
    expect(ledger.filter((entry: { kind: string }) => entry.kind === 'charge')).toHaveLength(5)
  })
})
