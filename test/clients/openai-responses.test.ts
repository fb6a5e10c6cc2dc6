import { beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { testDatabases } from '../support/databases'
import type { TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import type { MockUpstream } from '../upstream/mock-upstream'

/**
 * The Responses API through the official openai client, on a native route (test/cheap: an
 * OpenAI provider with the Responses API), a translated Anthropic route (anthropic/claude-test)
 * and a translated chat-only route (test/chat-only), each billed exactly.
 */
const routes = [
  { name: 'native', model: 'test/cheap', upstreamPath: '/v1/responses', price: { input: 1, output: 2 } },
  { name: 'translated to Anthropic messages', model: 'anthropic/claude-test', upstreamPath: '/v1/messages', price: { input: 3, output: 15 } },
  { name: 'translated to chat completions', model: 'test/chat-only', upstreamPath: '/v1/chat/completions', price: { input: 1, output: 4 } },
] as const

describe('Responses API through the official openai client', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true, secondUpstream: true })
  let a: MockUpstream
  let b: MockUpstream
  let harness: TestGateway
  let client: OpenAI
  let keyId: string
  let accountId: string

  beforeAll(async () => {
    ;({ upstream: a, secondUpstream: b, harness } = served)
    const key = await harness.key()
    keyId = key.id
    accountId = key.accountId
    client = new OpenAI({ apiKey: key.key, baseURL: `${served.origin}/v1`, maxRetries: 0 })
  })
  beforeEach(() => {
    a.reset()
    b.reset()
  })

  const lastCharge = async () => (await harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.find((entry: { kind: string }) => entry.kind === 'charge')
  const received = () => [...a.received, ...b.received]
  const tools = [
    {
      type: 'function' as const,
      name: 'get_weather',
      description: 'Weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
      strict: false,
    },
  ]

  for (const route of routes) {
    describe(route.name, () => {
      test('responses.create, non-streaming, billed from the usage', async () => {
        const mock = route.model === 'test/chat-only' ? b : a
        mock.script({ text: 'Hello there.', usage: { prompt_tokens: 40, completion_tokens: 5 } })
        const response = await client.responses.create({ model: route.model, input: 'Say hello.', instructions: 'Be brief.', max_output_tokens: 100 })
        expect(response.output_text).toBe('Hello there.')
        expect(response.status).toBe('completed')
        expect(response.model).toBe(route.model)
        const cost = Math.ceil(40 * route.price.input + 5 * route.price.output) / 1e6
        expect((response.usage as unknown as { cost: number }).cost).toBe(cost)
        expect(response.usage).toMatchObject({ input_tokens: 40, output_tokens: 5 })
        expect(received()[0]!.path).toBe(route.upstreamPath)
        expect((await lastCharge()).amount).toBe(cost)
      })

      test('streaming with stream: true, and responses.stream().finalResponse()', async () => {
        const mock = route.model === 'test/chat-only' ? b : a
        mock.script(
          { text: 'one two three', usage: { prompt_tokens: 10, completion_tokens: 3 } },
          { text: 'four five', usage: { prompt_tokens: 10, completion_tokens: 2 } },
        )
        const deltas: string[] = []
        let completed: any
        const sequence: number[] = []
        for await (const event of await client.responses.create({ model: route.model, input: 'Count.', stream: true })) {
          sequence.push(event.sequence_number)
          if (event.type === 'response.output_text.delta') deltas.push(event.delta)
          if (event.type === 'response.completed') completed = event.response
        }
        expect(deltas.join('')).toBe('one two three')
        expect(sequence).toEqual(sequence.map((_, index) => sequence[0]! + index))
        expect(completed.usage).toMatchObject({ input_tokens: 10, output_tokens: 3, cost: Math.ceil(10 * route.price.input + 3 * route.price.output) / 1e6 })

        const final = await client.responses.stream({ model: route.model, input: 'More.' }).finalResponse()
        expect(final.output_text).toBe('four five')
      })

      test('function tools round-trip through function_call_output', async () => {
        const mock = route.model === 'test/chat-only' ? b : a
        mock.script({ toolCalls: [{ id: 'call_42', name: 'get_weather', arguments: '{"city":"Oslo"}' }] }, { text: 'It is 3C in Oslo.' })
        const first = await client.responses.create({ model: route.model, input: 'Weather in Oslo?', tools, store: false })
        const call = first.output.find((item) => item.type === 'function_call')
        expect(call).toMatchObject({ type: 'function_call', call_id: 'call_42', name: 'get_weather', arguments: '{"city":"Oslo"}' })
        const second = await client.responses.create({
          model: route.model,
          tools,
          store: false,
          input: [{ role: 'user', content: 'Weather in Oslo?' }, call as never, { type: 'function_call_output', call_id: 'call_42', output: '3C' }],
        })
        expect(second.output_text).toBe('It is 3C in Oslo.')
        const sent = received().at(-1)!.body
        if (route.upstreamPath === '/v1/chat/completions') {
          expect(sent.messages.slice(-2)).toEqual([
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_42', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
            },
            { role: 'tool', tool_call_id: 'call_42', content: '3C' },
          ])
        } else if (route.upstreamPath === '/v1/messages') {
          expect(sent.messages.slice(-1)[0].content).toEqual([{ type: 'tool_result', tool_use_id: 'call_42', content: '3C' }])
        } else {
          expect(sent.input.at(-1)).toEqual({ type: 'function_call_output', call_id: 'call_42', output: '3C' })
        }
      })
    })
  }

  test('streamed function calls on a translated route arrive as function_call_arguments events', async () => {
    a.script({ toolCalls: [{ id: 'toolu_7', name: 'get_weather', arguments: '{"city":"Rome"}' }] })
    const types: string[] = []
    let args = ''
    for await (const event of await client.responses.create({ model: 'anthropic/claude-test', input: 'Weather in Rome?', tools, stream: true })) {
      types.push(event.type)
      if (event.type === 'response.function_call_arguments.delta') args += event.delta
    }
    expect(args).toBe('{"city":"Rome"}')
    expect(types).toContain('response.function_call_arguments.done')
    expect(types.at(-1)).toBe('response.completed')
  })

  test('reasoning from a translated upstream arrives as a reasoning item with reasoning_text events', async () => {
    a.script({ thinking: { text: 'Consider the question.', signature: 'sig' }, text: 'Answer.' })
    const types: string[] = []
    let reasoning = ''
    let final: any
    for await (const event of await client.responses.create({ model: 'anthropic/claude-test', input: 'Think first.', stream: true })) {
      types.push(event.type)
      if (event.type === ('response.reasoning_text.delta' as string)) reasoning += (event as unknown as { delta: string }).delta
      if (event.type === 'response.completed') final = event.response
    }
    expect(reasoning).toBe('Consider the question.')
    expect(final.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'message'])
    expect(final.output[1].content[0].text).toBe('Answer.')
  })

  test('previous_response_id and store need a native route: a clear 400 elsewhere', async () => {
    for (const body of [{ previous_response_id: 'resp_1' }, { store: true }]) {
      const refused = await client.responses.create({ model: 'anthropic/claude-test', input: 'x', ...body }).catch((error: unknown) => error)
      expect(refused).toMatchObject({ status: 400, code: 'invalid_request', param: Object.keys(body)[0] })
    }
    expect((await client.responses.create({ model: 'test/cheap', input: 'x', previous_response_id: 'resp_1' })).status).toBe('completed')
    expect(a.received[0]!.body.previous_response_id).toBe('resp_1')
  })

  test('an upstream failure is not billed, before or during the stream', async () => {
    const before = (await harness.admin('GET', `/accounts/${accountId}`)).json.wallet
    a.script({ kind: 'error', status: 500 })
    expect(await client.responses.create({ model: 'test/cheap', input: 'x' }).catch((error: unknown) => error)).toMatchObject({ status: 502 })
    a.script({ text: 'a b c d', cutAfterChunks: 3 })
    const stream = await client.responses.create({ model: 'test/cheap', input: 'x', stream: true })
    const failure = await (async () => {
      for await (const _ of stream) {
      }
    })().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Error)
    b.script({ text: 'a b c d', cutAfterChunks: 2 })
    const types: string[] = []
    for await (const event of await client.responses.create({ model: 'test/chat-only', input: 'x', stream: true })) types.push(event.type)
    expect(types.at(-1)).toBe('response.failed')
    expect((await harness.admin('GET', `/accounts/${accountId}`)).json.wallet).toEqual(before)
  })
})
