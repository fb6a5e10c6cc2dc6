import { beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { estimateTextTokens } from '../../src/billing/estimator'
import { testDatabases } from '../support/databases'
import type { TestGateway } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import type { MockUpstream } from '../upstream/mock-upstream'
import { MOCK_VECTOR, speechBytes, TRANSCRIPT } from '../upstream/openai-media'

/** Embeddings, images, speech and transcriptions through the official openai client, billed. */
describe('OpenAI media endpoints through the official client', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true, secondUpstream: true })
  let upstream: MockUpstream
  let harness: TestGateway
  let client: OpenAI
  let keyId: string
  let accountId: string

  beforeAll(async () => {
    ;({ upstream, harness } = served)
    const key = await harness.key()
    keyId = key.id
    accountId = key.accountId
    client = new OpenAI({ apiKey: key.key, baseURL: `${served.origin}/v1`, maxRetries: 0 })
  })
  beforeEach(() => upstream.reset())

  /** The newest charge on the key, in credits. */
  const lastCharge = async () => (await harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.find((entry: { kind: string }) => entry.kind === 'charge')

  test('embeddings: base64 by default, decoded by the SDK to the same floats; billed on input tokens', async () => {
    upstream.script({ usage: { prompt_tokens: 12, completion_tokens: 0 } })
    const result = await client.embeddings.create({ model: 'test/embed', input: ['first text', 'second text'] })
    expect(upstream.received[0]!.body).toMatchObject({ model: 'embed', encoding_format: 'base64' })
    expect(result.data.map((item) => item.embedding)).toEqual([MOCK_VECTOR, MOCK_VECTOR.map((value) => value * 2)])
    expect(result.model).toBe('test/embed')
    const cost = Math.ceil(12 * 0.02) / 1e6
    expect((result.usage as unknown as { cost: number }).cost).toBe(cost)
    expect((await lastCharge()).amount).toBe(cost)

    const floats = await client.embeddings.create({ model: 'test/embed', input: 'x', encoding_format: 'float' })
    expect(floats.data[0]!.embedding).toEqual(MOCK_VECTOR)
  })

  test("embeddings on a Gemini model: batchEmbedContents, vectors back in OpenAI's shape, billed on the estimate", async () => {
    const input = ['alpha beta', 'gamma']
    const result = await client.embeddings.create({ model: 'google/gemini-embed', input, dimensions: 3 })
    const sent = upstream.received[0]!
    expect(sent.path).toBe('/v1beta/models/gemini-embed-a:batchEmbedContents')
    expect(sent.body.requests).toEqual(input.map((text) => ({ model: 'models/gemini-embed-a', content: { parts: [{ text }] }, outputDimensionality: 3 })))
    expect(result.data.map((item) => item.embedding)).toEqual([MOCK_VECTOR, MOCK_VECTOR.map((value) => value * 2)])
    const tokens = input.reduce((total, text) => total + estimateTextTokens(text), 0)
    expect(result.usage).toMatchObject({ prompt_tokens: tokens, cost: Math.ceil(tokens * 0.15) / 1e6 })
    const tokenArrays = await client.embeddings.create({ model: 'google/gemini-embed', input: [[1, 2, 3]] }).catch((error: unknown) => error)
    expect(tokenArrays).toMatchObject({ status: 400, param: 'input' })
  })

  test('images: per image returned; the hold covers n', async () => {
    const result = await client.images.generate({ model: 'test/image', prompt: 'a cat', n: 2 })
    expect(result.data).toHaveLength(2)
    expect(result.data![0]!.b64_json).toBe('iVBORw0KGgo=')
    expect((result.usage as unknown as { cost: number }).cost).toBe(0.08)
    expect((await lastCharge()).amount).toBe(0.08)

    const poor = await harness.key({ account_id: (await harness.account(0.05)).id })
    const refused = await new OpenAI({ apiKey: poor.key, baseURL: client.baseURL, maxRetries: 0 }).images
      .generate({ model: 'test/image', prompt: 'two cats', n: 2 })
      .catch((error: unknown) => error)
    expect(refused).toMatchObject({ status: 402, code: 'insufficient_balance' })
    expect(upstream.received).toHaveLength(1)
  })

  test("speech: the audio bytes with the format's content type, billed per character", async () => {
    const input = 'Héllo, wörld! 👋'
    const mp3 = await client.audio.speech.create({ model: 'test/tts', input, voice: 'alloy' })
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg')
    expect(new Uint8Array(await mp3.arrayBuffer())).toEqual(speechBytes(input))
    // Code points, not UTF-16 units: the emoji counts once.
    expect((await lastCharge()).amount).toBe(Math.ceil([...input].length * 15) / 1e6)
    const opus = await client.audio.speech.create({ model: 'test/tts', input: 'hi', voice: 'alloy', response_format: 'opus' })
    expect(opus.headers.get('content-type')).toBe('audio/opus')
  })

  test('transcriptions in each response format, billed on the transcript and the reported (else measured) minutes', async () => {
    const file = () => toFile(new Uint8Array(48_000), 'speech.mp3', { type: 'audio/mpeg' })
    const json = await client.audio.transcriptions.create({ model: 'test/whisper', file: await file() })
    expect(json.text).toBe(TRANSCRIPT)
    expect(upstream.received[0]!.body).toMatchObject({ model: 'whisper-a', file: 'speech.mp3:48000 bytes' })
    // json reports 9 output tokens and no duration: the duration the hold was sized from is billed
    // (48,000 bytes of no known container: 64 s at the fallback 750 bytes a second).
    expect((await lastCharge()).amount).toBe((Math.ceil(9 * 10) + Math.ceil((64 * 0.006 * 1e6) / 60)) / 1e6)

    const verbose = await client.audio.transcriptions.create({
      model: 'test/whisper',
      file: await file(),
      response_format: 'verbose_json',
      timestamp_granularities: ['segment'],
    })
    expect(verbose).toMatchObject({ text: TRANSCRIPT, duration: 9.5 })
    const transcriptMicros = Math.ceil(estimateTextTokens(TRANSCRIPT) * 10)
    const minuteMicros = Math.ceil((9.5 * 0.006 * 1e6) / 60)
    expect((await lastCharge()).amount).toBeCloseTo((transcriptMicros + minuteMicros) / 1e6, 6)

    // Speaker-labelled segments: JSON, passed through with usage.cost; 11 transcript tokens plus the 9.5 s.
    const diarized = await client.audio.transcriptions.create({
      model: 'test/whisper',
      file: await file(),
      response_format: 'diarized_json',
      chunking_strategy: 'auto',
    })
    expect(upstream.received.at(-1)!.body).toMatchObject({ response_format: 'diarized_json', chunking_strategy: 'auto' })
    expect(diarized).toMatchObject({ text: TRANSCRIPT, duration: 9.5, segments: [{ speaker: 'A' }, { speaker: 'B' }] })
    const diarizedCost = (Math.ceil(11 * 10) + minuteMicros) / 1e6
    expect((diarized.usage as unknown as { cost: number }).cost).toBeCloseTo(diarizedCost, 6)
    expect((await lastCharge()).amount).toBeCloseTo(diarizedCost, 6)

    for (const format of ['text', 'srt', 'vtt'] as const) {
      const text = await client.audio.transcriptions.create({ model: 'test/whisper', file: await file(), response_format: format })
      expect(typeof text).toBe('string')
      expect(String(text)).toContain(TRANSCRIPT)
    }
    expect(upstream.received.at(-1)!.body.response_format).toBe('vtt')
  })

  test('transcriptions hold the duration read from the file: 9.5 s of 6 kbit/s Opus in 7 KB', async () => {
    const opus = await Bun.file(`${import.meta.dir}/../fixtures/audio/opus.ogg`).bytes()
    const file = () => toFile(opus, 'speech.ogg', { type: 'audio/ogg' })
    const { response } = await client.audio.transcriptions.create({ model: 'test/whisper', file: await file() }).withResponse()
    const requestId = response.headers.get('x-request-id')
    const ledger = (await harness.admin('GET', `/ledger?request_id=${requestId}`)).json.data as { kind: string; amount: number }[]
    // 9.5 s, rounded up to 10: 10 s at 0.006 a minute, plus 50 transcript tokens (300 a minute) at 10 a million.
    const heldMicros = Math.ceil((10 * 0.006 * 1e6) / 60) + Math.ceil((10 / 60) * 300) * 10
    expect(ledger.find((entry) => entry.kind === 'hold')!.amount).toBe(heldMicros / 1e6)

    // 0.001 credits covered the hold sized from the bytes (2 s at 4,000 bytes a second,
    // 0.0003), not the 0.0015 that 9.5 s of audio takes.
    upstream.reset()
    const poor = await harness.key({ account_id: (await harness.account(0.001)).id })
    const refused = await new OpenAI({ apiKey: poor.key, baseURL: client.baseURL, maxRetries: 0 }).audio.transcriptions
      .create({ model: 'test/whisper', file: await file() })
      .catch((error: unknown) => error)
    expect(refused).toMatchObject({ status: 402, code: 'insufficient_balance' })
    expect(upstream.received).toHaveLength(0)
  })

  test('limits and types: 413 over 25 MiB, an endpoint refuses other types of models', async () => {
    const big = await toFile(new Uint8Array(25 * 1024 * 1024 + 1), 'long.mp3', { type: 'audio/mpeg' })
    const tooLarge = await client.audio.transcriptions.create({ model: 'test/whisper', file: big }).catch((error: unknown) => error)
    expect(tooLarge).toMatchObject({ status: 413, code: 'request_too_large' })
    const declared = await harness.gateway.handle(
      new Request('http://localhost/v1/audio/transcriptions', {
        method: 'POST',
        headers: {
          authorization: client.apiKey ? `Bearer ${client.apiKey}` : '',
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': String(40 * 1024 * 1024),
        },
        body: new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('--x\r\n')) }),
      }),
    )
    // Refused from the declared length alone: the body never finishes arriving.
    expect(declared.status).toBe(413)
    const wrongType = await client.embeddings.create({ model: 'test/cheap', input: 'x' }).catch((error: unknown) => error)
    expect(wrongType).toMatchObject({ status: 400, code: 'model_not_supported' })
    const badSpeed = await client.audio.speech.create({ model: 'test/tts', input: 'x', voice: 'alloy', speed: 9 }).catch((error: unknown) => error)
    expect(badSpeed).toMatchObject({ status: 400, code: 'invalid_request', param: 'speed' })
    expect(upstream.received).toHaveLength(0)
    expect((await harness.admin('GET', `/accounts/${accountId}`)).json.wallet.held).toBe(0)
  })
})
