import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { responsesSocketServer } from '../../src/surfaces/responses/socket-server'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { SocketClient } from '../support/socket-client'

/**
 * Responses over WebSocket (docs/api.md#responses-over-websocket), with Bun's WebSocket client
 * against the gateway served on loopback: each `response.create` is one billed call with its
 * own hold and request id, answered with the stream's events one message each.
 */
for (const kind of testDatabases) {
  describe(`Responses over WebSocket (${kind.kind})`, () => {
    const suite = gatewaySuite(kind, { served: true })
    const upstream = () => suite.upstream
    const socketUrl = () => `${suite.origin.replace('http:', 'ws:')}/v1/responses`
    const ledger = async (query: string) => (await suite.harness.admin('GET', `/ledger?${query}`)).json.data as any[]
    const wallet = async (accountId: string) => (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet
    const logLines = () => suite.harness.logs.map((line) => JSON.parse(line)).filter((line) => line.transport === 'websocket')
    /** The calls made on sockets, without the handshakes' lines. */
    const socketLogs = () => logLines().filter((line) => line.method === 'POST')
    const create = (body: object) => JSON.stringify({ type: 'response.create', model: 'test/cheap', input: 'Say hi.', ...body })
    const openSocket = async (key: string) => SocketClient.open(socketUrl(), bearer(key))
    beforeEach(() => {
      upstream().reset()
      suite.harness.logs.length = 0
    })

    test('a turn is one billed call: the stream events one message each, the exact charge, logged as websocket', async () => {
      const { key, id: keyId } = await suite.harness.key()
      upstream().always({ text: 'Hello there.', usage: { prompt_tokens: 500, completion_tokens: 7 } })
      const socket = await openSocket(key)
      socket.send(create({}))
      const events = await socket.untilType('response.completed')
      expect(events[0]!.type).toBe('response.created')
      expect(events.map((event) => event.type)).toContain('response.output_text.delta')
      const completed = events.at(-1)!
      expect(completed.response.output[0].content[0].text).toBe('Hello there.')
      expect(completed.response.usage.cost).toBe((500 * 1 + 7 * 2) / 1e6)
      const charges = (await ledger(`key_id=${keyId}`)).filter((entry) => entry.kind === 'charge')
      expect(charges.map((entry) => entry.amount)).toEqual([(500 * 1 + 7 * 2) / 1e6])
      // The upstream was asked for a stream, without the socket protocol's own fields.
      expect(upstream().received[0]!.body).toMatchObject({ stream: true, input: 'Say hi.' })
      expect(upstream().received[0]!.body.type).toBeUndefined()
      socket.close()
      expect(logLines()).toMatchObject([
        { method: 'GET', route: '/v1/responses', status: 101, outcome: 'ok', key_id: keyId },
        { method: 'POST', route: '/v1/responses', status: 200, outcome: 'ok', key_id: keyId },
      ])
    })

    test('two turns on one socket: two holds, two request ids; previous_response_id continues the socket conversation', async () => {
      const { key, id: keyId } = await suite.harness.key()
      upstream().always({ text: 'Noted.', usage: { prompt_tokens: 40, completion_tokens: 2 } })
      const socket = await openSocket(key)
      socket.send(create({ input: [{ type: 'message', role: 'user', content: 'Remember 7.' }] }))
      const first = (await socket.untilType('response.completed')).at(-1)!
      socket.send(create({ previous_response_id: first.response.id, input: [{ type: 'message', role: 'user', content: 'Which number?' }] }))
      await socket.untilType('response.completed')
      socket.close()
      const entries = await ledger(`key_id=${keyId}`)
      const holds = entries.filter((entry) => entry.kind === 'hold')
      const charges = entries.filter((entry) => entry.kind === 'charge')
      expect(holds).toHaveLength(2)
      expect(charges).toHaveLength(2)
      expect(new Set(charges.map((entry) => entry.request_id)).size).toBe(2)
      const logged = socketLogs()
      expect(logged.map((line) => line.request_id).sort()).toEqual(charges.map((entry) => entry.request_id).sort())
      // The second call carried the whole conversation: the first input, its answer, the new input.
      const second = upstream().received[1]!.body
      expect(second.previous_response_id).toBeUndefined()
      expect(second.input.map((item: { role?: string; type: string }) => item.role ?? item.type)).toEqual(['user', 'assistant', 'user'])
      expect(second.input[1].content[0].text).toBe('Noted.')
    })

    test('a socket closed mid-response is settled as an abandoned stream', async () => {
      const { key, accountId, id: keyId } = await suite.harness.key()
      upstream().script({ text: 'a b c d e f g h i j k l m n o p', chunkDelayMs: 30, usage: { prompt_tokens: 5, completion_tokens: 16 } })
      const socket = await openSocket(key)
      socket.send(create({}))
      await socket.untilType('response.output_text.delta')
      socket.close()
      for (let i = 0; i < 100 && (await wallet(accountId)).held !== 0; i++) await Bun.sleep(20)
      const after = await wallet(accountId)
      expect(after.held).toBe(0)
      const charge = (await ledger(`key_id=${keyId}`)).find((entry) => entry.kind === 'charge')
      expect(charge.usage.source).toBe('estimate')
      expect(charge.usage.output_tokens).toBeGreaterThan(0)
      expect(charge.usage.output_tokens).toBeLessThan(16)
      expect(after.balance).toBeCloseTo(100 - charge.amount, 6)
      for (let i = 0; i < 100 && socketLogs().length === 0; i++) await Bun.sleep(20)
      expect(socketLogs()).toMatchObject([{ route: '/v1/responses', outcome: 'client_closed' }])
    })

    test('a key revoked between turns is refused on the next call, which closes the socket; nothing more is charged', async () => {
      const { key, id: keyId } = await suite.harness.key()
      upstream().always({ text: 'Fine.', usage: { prompt_tokens: 10, completion_tokens: 2 } })
      const socket = await openSocket(key)
      socket.send(create({}))
      await socket.untilType('response.completed')
      expect((await suite.harness.admin('POST', `/keys/${keyId}/revoke`)).status).toBe(200)
      socket.send(create({}))
      const [refused] = await socket.untilType('error')
      expect(refused).toMatchObject({ type: 'error', status: 401, code: 'invalid_api_key', error: { code: 'invalid_api_key' } })
      expect(await socket.closed).toMatchObject({ code: 1008 })
      expect((await ledger(`key_id=${keyId}`)).filter((entry) => entry.kind === 'charge')).toHaveLength(1)
      expect(upstream().received).toHaveLength(1)
    })

    test('the handshake is authenticated: no key or a revoked key gets no socket', async () => {
      const { key, id: keyId } = await suite.harness.key()
      await suite.harness.admin('POST', `/keys/${keyId}/revoke`)
      suite.seen.length = 0
      // Awaited, not `expect(...).rejects`: that waits in a nested loop in which the embedded database does not run.
      const refused = async (headers: Record<string, string>) =>
        SocketClient.open(socketUrl(), headers).then(
          () => 'opened',
          () => 'refused',
        )
      expect(await refused(bearer(key))).toBe('refused')
      expect(await refused({})).toBe('refused')
      expect(logLines()).toMatchObject([
        { method: 'GET', route: '/v1/responses', status: 401, outcome: 'refused', error_code: 'invalid_api_key' },
        { method: 'GET', route: '/v1/responses', status: 401, outcome: 'refused', key_id: null },
      ])
      expect(suite.seen.filter((line) => line === 'WEBSOCKET /v1/responses 401')).toHaveLength(2)
    })

    test('bad messages get error events and the socket keeps serving; a second call while one runs is refused', async () => {
      const { key, id: keyId } = await suite.harness.key()
      const socket = await openSocket(key)
      const refusals: [string | Uint8Array, number, string][] = [
        ['not json', 400, 'invalid_request'],
        ['[1, 2]', 400, 'invalid_request'],
        [JSON.stringify({ type: 'session.update' }), 400, 'invalid_request'],
        [new Uint8Array([1, 2, 3]), 400, 'invalid_request'],
        [create({ model: undefined }), 400, 'invalid_request'],
        [create({ max_output_tokens: -1 }), 400, 'invalid_request'],
        [create({ model: 'nobody/nothing' }), 404, 'model_not_found'],
      ]
      for (const [message, status, code] of refusals) {
        socket.send(message)
        const [event] = await socket.untilType('error')
        expect({ status: event.status, code: event.code }).toEqual({ status, code })
        expect(event.error.message).toBeString()
      }
      upstream().script({ text: 'a b c d e f', chunkDelayMs: 20, usage: { prompt_tokens: 5, completion_tokens: 6 } })
      socket.send(create({}))
      await socket.untilType('response.created')
      socket.send(create({}))
      const events = await socket.untilType('response.completed')
      const refused = events.filter((event) => event.type === 'error')
      expect(refused).toMatchObject([{ status: 400, message: expect.stringContaining('already in progress') }])
      expect(events.at(-1)!.response.output[0].content[0].text).toBe('a b c d e f')
      socket.close()
      expect((await ledger(`key_id=${keyId}`)).filter((entry) => entry.kind === 'charge')).toHaveLength(1)
      expect(upstream().received).toHaveLength(1)
    })

    test('generate: false (Codex warming the socket up) is answered without an upstream call or a charge', async () => {
      const { key, id: keyId } = await suite.harness.key()
      const socket = await openSocket(key)
      socket.send(create({ generate: false }))
      const events = await socket.untilType('response.completed')
      expect(events.map((event) => event.type)).toEqual(['response.created', 'response.completed'])
      expect(events[1]!.response).toMatchObject({ status: 'completed', output: [], usage: { cost: 0 } })
      expect(upstream().received).toHaveLength(0)
      expect(await ledger(`key_id=${keyId}`)).toEqual([])
      // Codex's next call continues the warm-up with only the input added since.
      upstream().always({ text: 'Warm.', usage: { prompt_tokens: 9, completion_tokens: 1 } })
      socket.send(create({ previous_response_id: events[1]!.response.id, input: [{ type: 'message', role: 'user', content: 'Go.' }] }))
      await socket.untilType('response.completed')
      socket.close()
      const sent = upstream().received[0]!.body
      expect(sent.previous_response_id).toBeUndefined()
      expect(sent.input.map((item: { content: string }) => item.content)).toEqual(['Say hi.', 'Go.'])
    })

    describe('bounds', () => {
      const limits = { maxMessageBytes: 4096, idleMs: 150, maxCalls: 1 }
      let server: ReturnType<typeof Bun.serve> | undefined
      const boundedUrl = () => `ws://127.0.0.1:${server!.port}/v1/responses`
      let draining = false
      beforeAll(() => {
        const gateway = suite.harness.gateway
        const view = {
          refuseSocket: (request: Request) => gateway.refuseSocket(request),
          handleSocketCall: (request: Request) => gateway.handleSocketCall(request),
          get draining() {
            return draining
          },
        }
        const sockets = responsesSocketServer(view, limits)
        server = Bun.serve({ hostname: '127.0.0.1', port: 0, websocket: sockets.websocket, fetch: (request, bunServer) => sockets.upgrade(request, bunServer) })
      })
      afterAll(() => server?.stop(true))

      test('a message over the size limit closes the socket with 1009, uncharged', async () => {
        const { key, id: keyId } = await suite.harness.key()
        const socket = await SocketClient.open(boundedUrl(), bearer(key))
        socket.send(create({ input: 'x'.repeat(limits.maxMessageBytes) }))
        expect(await socket.closed).toMatchObject({ code: 1009 })
        expect(await ledger(`key_id=${keyId}`)).toEqual([])
      })

      test('a socket without a call for the idle time is closed', async () => {
        const { key } = await suite.harness.key()
        const socket = await SocketClient.open(boundedUrl(), bearer(key))
        expect(await socket.closed).toMatchObject({ code: 1000, reason: 'idle' })
      })

      test('a gateway shutting down lets the call in progress finish, then closes the socket with 1001', async () => {
        const { key, id: keyId } = await suite.harness.key()
        upstream().script({ text: 'a b c d', chunkDelayMs: 20, usage: { prompt_tokens: 5, completion_tokens: 4 } })
        const socket = await SocketClient.open(boundedUrl(), bearer(key))
        socket.send(create({}))
        await socket.untilType('response.created')
        draining = true
        try {
          const completed = (await socket.untilType('response.completed')).at(-1)!
          expect(completed.response.output[0].content[0].text).toBe('a b c d')
          expect(await socket.closed).toMatchObject({ code: 1001 })
        } finally {
          draining = false
        }
        expect((await ledger(`key_id=${keyId}`)).filter((entry) => entry.kind === 'charge')).toHaveLength(1)
      })

      test('past its calls a socket answers websocket_connection_limit_reached (Codex reconnects) and closes', async () => {
        const { key, id: keyId } = await suite.harness.key()
        upstream().always({ text: 'One.', usage: { prompt_tokens: 5, completion_tokens: 1 } })
        const socket = await SocketClient.open(boundedUrl(), bearer(key))
        socket.send(create({}))
        await socket.untilType('response.completed')
        socket.send(create({}))
        const [limited] = await socket.untilType('error')
        expect(limited).toMatchObject({ code: 'websocket_connection_limit_reached' })
        expect(await socket.closed).toMatchObject({ code: 1000 })
        expect((await ledger(`key_id=${keyId}`)).filter((entry) => entry.kind === 'charge')).toHaveLength(1)
      })
    })

    test('a malformed upgrade is 400 in the OpenAI envelope; a plain GET is 405', async () => {
      const { key } = await suite.harness.key()
      const malformed = await fetch(`${suite.origin}/v1/responses`, { headers: { ...bearer(key), upgrade: 'websocket', connection: 'Upgrade' } })
      expect(malformed.status).toBe(400)
      expect((await malformed.json()).error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('Sec-WebSocket-Key') })
      expect((await fetch(`${suite.origin}/v1/responses`, { headers: bearer(key) })).status).toBe(405)
    })

    test('plain HTTP keeps working: POST /v1/responses streams as before', async () => {
      const { key } = await suite.harness.key()
      upstream().always({ text: 'Over HTTP.', usage: { prompt_tokens: 5, completion_tokens: 3 } })
      const response = await fetch(`${suite.origin}/v1/responses`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test/cheap', input: 'Say hi.', stream: true }),
      })
      expect(response.status).toBe(200)
      expect(await response.text()).toContain('event: response.completed')
      const logged = suite.harness.logs.map((line) => JSON.parse(line)).filter((line) => line.route === '/v1/responses')
      expect(logged.map((line) => line.transport)).toEqual(['http'])
    })
  })
}
