import { beforeEach, describe, expect, test } from 'bun:test'
import { testDatabases } from '../support/databases'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'

/**
 * A multipart form's fields arrive as text and are checked like a JSON body's: a field out of
 * range or of the wrong type is 400 invalid_request naming it in `param`, before anything is
 * held or sent upstream, and a good number reaches the upstream as the number it was.
 */
for (const kind of testDatabases) {
  describe(`multipart fields are checked naming their param (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)
    beforeEach(() => suite.upstream.reset())

    const transcribe = async (fields: Record<string, string>) => {
      const { key } = await suite.harness.key()
      const form = new FormData()
      form.set('file', new File([new Uint8Array(4000)], 'speech.mp3', { type: 'audio/mpeg' }))
      form.set('model', 'test/whisper')
      for (const [name, value] of Object.entries(fields)) form.set(name, value)
      const response = await suite.harness.gateway.handle(
        new Request('http://localhost/v1/audio/transcriptions', { method: 'POST', headers: bearer(key), body: form }),
      )
      return { status: response.status, json: await response.json() }
    }

    test.each([
      [{ temperature: '1.5' }, 'temperature', "Invalid value for 'temperature': Expected number to be less or equal to 1."],
      [{ temperature: '-0.1' }, 'temperature', "Invalid value for 'temperature': Expected number to be greater or equal to 0."],
      [{ temperature: 'warm' }, 'temperature', "Invalid value for 'temperature': Expected number."],
      [{ temperature: '' }, 'temperature', "Invalid value for 'temperature': Expected number."],
      [{ temperature: '0x1' }, 'temperature', "Invalid value for 'temperature': Expected number."],
      [{ response_format: 'xml' }, 'response_format', undefined],
      [{ model: '' }, 'model', "Invalid value for 'model': Expected string length greater or equal to 1."],
    ])('%o is refused naming %s', async (fields, param, message) => {
      const reply = await transcribe(fields)
      expect(reply.status).toBe(400)
      expect(reply.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param })
      if (message) expect(reply.json.error.message).toBe(message)
      expect(suite.upstream.received).toHaveLength(0)
    })

    test('a number in range is read as one and reaches the upstream', async () => {
      const reply = await transcribe({ temperature: '0.25' })
      expect(reply.status).toBe(200)
      expect(suite.upstream.received[0]?.body).toMatchObject({ model: 'whisper-a', temperature: '0.25' })
    })
  })
}
