import { beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { recordOf } from '../support/activity'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * What a request line says of a refusal or a failure (docs/operations.md#logs): the error code
 * answered, the caller from the moment it was authenticated (a 429 names the key it throttled),
 * and the model asked for beside the one that served. The activity record says the same.
 */
const hi = [{ role: 'user', content: 'Say hi.' }]

describe('request log fields of refusals and failures', () => {
  const suite = gatewaySuite(testDatabases[0]!)
  let key: { id: string; key: string; accountId: string }

  beforeAll(async () => {
    key = await suite.harness.key()
  })
  beforeEach(() => suite.upstream.reset())

  const chat = (body: object, credential = key.key) => suite.harness.call('POST', '/v1/chat/completions', { headers: bearer(credential), body })

  /** The line of the request this reply answered. */
  async function lineOf(reply: { headers: Headers }): Promise<any> {
    const requestId = reply.headers.get('x-request-id')
    for (let waited = 0; waited < 5000; waited += 10) {
      const line = suite.harness.logs.map((text) => JSON.parse(text)).find((entry) => entry.request_id === requestId)
      if (line) return line
      await Bun.sleep(10)
    }
    throw new Error(`no log line for ${requestId}`)
  }

  /** The line and the activity record agree on the fields they share. */
  async function expectRecordMatches(reply: { headers: Headers }, line: any): Promise<void> {
    const record = await recordOf(suite.harness, reply.headers.get('x-request-id'))
    expect({ error_code: record.error_code, key_id: record.key_id, model_requested: record.model_requested, status: record.status }).toEqual({
      error_code: line.error_code,
      key_id: line.key_id,
      model_requested: line.model_requested,
      status: line.status,
    })
  }

  test('a success has no error code; an alias is logged as asked for beside the model that served', async () => {
    suite.upstream.script({ text: 'Hi.' })
    const reply = await chat({ model: 'tollgate/best', messages: hi })
    expect(reply.status).toBe(200)
    const line = await lineOf(reply)
    expect(line).toMatchObject({ status: 200, outcome: 'ok', error_code: null, model_requested: 'tollgate/best', model: 'test/smart', key_id: key.id })
    await expectRecordMatches(reply, line)
  })

  test('a 429 names the key it throttled and its code', async () => {
    const limited = await suite.harness.key({ rpm: 1 })
    suite.upstream.script({ text: 'Hi.' })
    expect((await chat({ model: 'test/cheap', messages: hi }, limited.key)).status).toBe(200)
    const reply = await chat({ model: 'test/cheap', messages: hi }, limited.key)
    expect(reply.status).toBe(429)
    const line = await lineOf(reply)
    expect(line).toMatchObject({ level: 'warn', status: 429, outcome: 'refused', error_code: reply.json.error.code, key_id: limited.id, payer: limited.id })
    expect(line.error_code).toBe('rate_limit_exceeded')
    await expectRecordMatches(reply, line)
  })

  test("a key's scope refusal (403) names the key and its code", async () => {
    const embeddingsOnly = await suite.harness.key({ scopes: ['embeddings'] })
    const reply = await chat({ model: 'test/cheap', messages: hi }, embeddingsOnly.key)
    expect(reply.status).toBe(403)
    const line = await lineOf(reply)
    expect(line).toMatchObject({ status: 403, error_code: reply.json.error.code, key_id: embeddingsOnly.id })
    await expectRecordMatches(reply, line)
  })

  test('a model the key may not use (403) and an unknown model (404) keep the model asked for', async () => {
    const restricted = await suite.harness.key({ allowed_models: ['anthropic/*'] })
    const forbidden = await chat({ model: 'test/cheap', messages: hi }, restricted.key)
    expect(forbidden.status).toBe(403)
    expect(await lineOf(forbidden)).toMatchObject({ error_code: 'model_not_allowed', model_requested: 'test/cheap', key_id: restricted.id })
    const unknown = await chat({ model: 'no-such/model', messages: hi })
    expect(unknown.status).toBe(404)
    const line = await lineOf(unknown)
    expect(line).toMatchObject({ error_code: 'model_not_found', model_requested: 'no-such/model', model: null, key_id: key.id })
    await expectRecordMatches(unknown, line)
  })

  test('a refusal before authentication names no caller; a 402 names the key that could not pay', async () => {
    const anonymous = await chat({ model: 'test/cheap', messages: hi }, 'tg_live_not_a_real_key')
    expect(anonymous.status).toBe(401)
    expect(anonymous.json.error.code).toBeString()
    expect(await lineOf(anonymous)).toMatchObject({ error_code: anonymous.json.error.code, key_id: null, user_id: null })
    const poor = await suite.harness.key({ account_id: (await suite.harness.account(0)).id })
    const reply = await chat({ model: 'test/cheap', messages: hi }, poor.key)
    expect(reply.status).toBe(402)
    const line = await lineOf(reply)
    expect(line).toMatchObject({ error_code: reply.json.error.code, key_id: poor.id, model_requested: 'test/cheap' })
    await expectRecordMatches(reply, line)
  })

  test('a stream the upstream cut is logged with the error its client was told', async () => {
    suite.upstream.script({ text: 'one two three four five six', cutAfterChunks: 2 })
    const reply = await chat({ model: 'test/cheap', messages: hi, stream: true })
    expect(reply.status).toBe(200)
    const line = await lineOf(reply)
    expect(line).toMatchObject({ status: 200, outcome: 'upstream_error', error_code: 'upstream_error' })
    expect(reply.text).toContain(`"code":"${line.error_code}"`)
    await expectRecordMatches(reply, line)
  })

  test('a model id shaped like a credential is redacted; one with control characters is not recorded', async () => {
    const pasted = `sk-proj-${'A1b2C3d4E5'.repeat(4)}`
    const reply = await chat({ model: pasted, messages: hi })
    expect(reply.status).toBe(404)
    const line = await lineOf(reply)
    expect(JSON.stringify(line)).not.toContain(pasted)
    expect(line.model_requested).toContain('[redacted]')
    const control = await chat({ model: 'bad\u0000model', messages: hi })
    expect(await lineOf(control)).toMatchObject({ model_requested: null })
    expect((await recordOf(suite.harness, control.headers.get('x-request-id'))).model_requested).toBeNull()
  })
})
