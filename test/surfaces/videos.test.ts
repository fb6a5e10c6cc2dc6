import { beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { snapFamilyB } from '../../src/surfaces/videos/decode'
import { testDatabases } from '../support/databases'
import { expectError } from '../support/envelopes'
import { bearer } from '../support/gateway'
import { gatewaySuite } from '../support/gateway-suite'
import { MP4_BYTES } from '../upstream/videos'

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const mp4 = Buffer.from(MP4_BYTES).toString('base64')

test('family B snaps durations to 4, 8 or 12, ties upward', () => {
  expect([1, 4, 5.9, 6, 7, 9.9, 10, 12, 20].map(snapFamilyB)).toEqual([4, 4, 4, 8, 8, 8, 12, 12, 12])
})

describe('POST /v1/videos/generations', () => {
  const suite = gatewaySuite(testDatabases[0]!)
  const upstream = suite.upstream
  let key: string
  let keyId: string
  let accountId: string

  beforeAll(async () => {
    ;({ key, id: keyId, accountId } = await suite.harness.key())
  })
  beforeEach(() => upstream.reset())

  const generate = (body: object) => suite.harness.call('POST', '/v1/videos/generations', { headers: bearer(key), body })
  const charges = async () =>
    (await suite.harness.admin('GET', `/ledger?key_id=${keyId}`)).json.data.filter((entry: { kind: string }) => entry.kind === 'charge')
  const balance = async () => (await suite.harness.admin('GET', `/accounts/${accountId}`)).json.wallet

  test('family B: multipart submit with snapped seconds and size, polling, the clip inline, billed by the returned seconds', async () => {
    upstream.script({ kind: 'video', pollsBeforeDone: 2 })
    const reply = await generate({ model: 'test/sora', prompt: 'a cat', seconds: 7, aspect_ratio: '9:16', image: `data:image/png;base64,${PNG}` })
    expect(reply.status).toBe(200)
    const submit = upstream.received.find((request) => request.path === '/v1/videos')!
    expect(submit.body).toMatchObject({ model: 'sora-a', prompt: 'a cat', seconds: '8', size: '720x1280' })
    // The 1x1 reference image arrives scaled and cropped to the output size.
    expect(submit.body).toMatchObject({ input_reference: expect.stringMatching(/^reference\.png:\d+ bytes$/), input_reference_dimensions: '720x1280' })
    expect(upstream.received.filter((request) => request.path === '/v1/videos/video_1')).toHaveLength(3)
    expect(reply.json).toMatchObject({ model: 'test/sora', data: [{ b64_json: mp4, mime_type: 'video/mp4' }], duration_seconds: 8, usage: { cost: 0.8 } })
    expect((await charges())[0]).toMatchObject({ amount: 0.8, usage: { video_seconds: 8, source: 'provider' } })
  })

  test('family A: Veo parameters, images in each encoding, lastFrame; no reported duration bills the requested seconds', async () => {
    upstream.script({ kind: 'video' })
    const reply = await generate({
      model: 'google/veo-test',
      prompt: 'a dog',
      aspect_ratio: '16:9',
      resolution: '1080p',
      resize_mode: 'CROP',
      input_image: { b64_json: PNG },
      last_frame: 'gs://bucket/uploads/last.jpg',
      duration_seconds: 6,
    })
    expect(reply.status).toBe(200)
    const submit = upstream.received[0]!
    expect(submit.path).toBe('/v1/projects/proj/locations/us-central1/publishers/google/models/veo-test-001:predictLongRunning')
    expect(submit.headers.authorization).toBe('Bearer vertex-token')
    expect(submit.body).toEqual({
      instances: [
        {
          prompt: 'a dog',
          image: { bytesBase64Encoded: PNG, mimeType: 'image/png' },
          lastFrame: { gcsUri: 'gs://bucket/uploads/last.jpg', mimeType: 'image/jpeg' },
        },
      ],
      parameters: { sampleCount: 1, durationSeconds: 6, aspectRatio: '16:9', resolution: '1080p', resizeMode: 'crop' },
    })
    expect(upstream.received[1]!.body.operationName).toContain('/operations/')
    expect(reply.json.duration_seconds).toBeUndefined()
    expect(reply.json.data[0]).toEqual({ b64_json: mp4, mime_type: 'video/mp4' })
    expect((await charges())[0]).toMatchObject({ amount: 2.4, usage: { video_seconds: 6, source: 'requested' } })

    upstream.script({ kind: 'video', asUri: true })
    const byUri = await generate({ model: 'google/veo-test', prompt: 'x', image: PNG, image_url: undefined })
    expect(byUri.json.data[0]).toEqual({ url: 'gs://bucket/sample_0.mp4', mime_type: 'video/mp4' })
  })

  test("gs:// images only under the provider's gcsUriPrefixes, typed by their extension", async () => {
    const before = await balance()
    for (const uri of [
      'gs://operator-private-bucket/secret.png',
      'gs://bucket/other/x.png',
      'gs://bucket/uploads-evil/x.png',
      'gs://bucket/uploads/../secret.png',
    ]) {
      const refused = await generate({ model: 'google/veo-test', prompt: 'x', image: uri })
      expectError(refused, 400, 'invalid_request')
      expect(refused.json.error).toMatchObject({ param: 'image' })
      expect(refused.json.error.message).toContain('gcsUriPrefixes')
    }
    expectError(await generate({ model: 'google/veo-test', prompt: 'x', last_frame: 'gs://bucket/uploads/clip.gif' }), 400, 'invalid_request')
    expect(upstream.received).toHaveLength(0)
    expect(await balance()).toEqual(before)

    upstream.script({ kind: 'video' })
    expect((await generate({ model: 'google/veo-test', prompt: 'x', image: 'gs://bucket/uploads/a.WEBP' })).status).toBe(200)
    expect(upstream.received[0]!.body.instances[0].image).toEqual({ gcsUri: 'gs://bucket/uploads/a.WEBP', mimeType: 'image/webp' })
  })

  test('safety blocks and failures are not billed', async () => {
    const before = await balance()
    upstream.script({ kind: 'video', result: 'blocked' })
    expectError(await generate({ model: 'google/veo-test', prompt: 'x' }), 400, 'content_policy_violation')
    upstream.script({ kind: 'video', result: 'blocked' })
    expectError(await generate({ model: 'test/sora', prompt: 'x' }), 400, 'content_policy_violation')
    upstream.script({ kind: 'video', result: 'failed' })
    expectError(await generate({ model: 'test/sora', prompt: 'x' }), 502, 'upstream_error')
    upstream.script({ kind: 'video', result: 'failed' })
    expectError(await generate({ model: 'google/veo-test', prompt: 'x' }), 502, 'upstream_error')
    expect(await balance()).toEqual(before)
  })

  test("parameter rules: HTTP(S) images, the other family's parameters, sizes", async () => {
    const checks: [object, string][] = [
      [{ model: 'test/sora', prompt: 'x', image: 'https://example.com/cat.png' }, 'image'],
      [{ model: 'google/veo-test', prompt: 'x', image_url: { url: 'http://example.com/cat.png' } }, 'image'],
      [{ model: 'test/sora', prompt: 'x', resolution: '1080p' }, 'resolution'],
      [{ model: 'test/sora', prompt: 'x', last_frame: PNG }, 'last_frame'],
      [{ model: 'test/sora', prompt: 'x', size: '1920x1080' }, 'size'],
      [{ model: 'google/veo-test', prompt: 'x', size: '1280x720' }, 'size'],
      [{ model: 'google/veo-test', prompt: 'x', image: 'not base64!' }, 'image'],
      [{ model: 'test/sora', prompt: 'x', image: Buffer.from('not an image at all').toString('base64') }, 'image'],
    ]
    for (const [body, param] of checks) {
      const reply = await generate(body)
      expectError(reply, 400, 'invalid_request')
      expect(reply.json.error.param).toBe(param)
    }
    expect(upstream.received).toHaveLength(0)
  })

  test('a client that goes away stops the polling, the job is cancelled, and nothing is billed', async () => {
    const before = await balance()
    upstream.script({ kind: 'video', readyAfterMs: 60_000 })
    const client = new AbortController()
    const pending = suite.harness.gateway
      .handle(
        new Request('http://localhost/v1/videos/generations', {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'test/sora', prompt: 'never mind' }),
          signal: client.signal,
        }),
      )
      .catch(() => undefined)
    await Bun.sleep(200)
    expect((await balance()).held).toBeGreaterThan(0)
    client.abort()
    await pending
    for (let i = 0; i < 50 && (await balance()).held !== 0; i++) await Bun.sleep(20)
    // The job was cancelled upstream (video-jobs.test.ts has the details); a poll already on the wire may still land.
    expect(upstream.received.filter((request) => request.method === 'DELETE')).toHaveLength(1)
    await Bun.sleep(50)
    const polls = upstream.received.length
    await Bun.sleep(100)
    expect(upstream.received.length).toBe(polls)
    expect(await balance()).toEqual(before)
  })

  test('bodies over 10 MiB are refused with 413 from their declared length', async () => {
    const response = await suite.harness.gateway.handle(
      new Request('http://localhost/v1/videos/generations', {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json', 'content-length': String(11 * 1024 * 1024) },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"model":'))
            // Never finished: the gateway must answer without waiting for the rest.
          },
        }),
      }),
    )
    expect(response.status).toBe(413)
    expect(((await response.json()) as any).error.code).toBe('request_too_large')
  })

  test('the limit is strictly under 10 MiB: exactly 10,485,760 bytes is 413 with or without Content-Length; one byte less is served', async () => {
    const TEN_MIB = 10 * 1024 * 1024
    // A valid request padded with spaces to the size wanted.
    const padded = (size: number) => {
      const json = JSON.stringify({ model: 'test/sora', prompt: 'a cat', seconds: 4 })
      return new TextEncoder().encode(json + ' '.repeat(size - json.length))
    }
    const send = (bytes: Uint8Array<ArrayBuffer>, declared: boolean) =>
      suite.harness.gateway.handle(
        new Request('http://localhost/v1/videos/generations', {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json', ...(declared ? { 'content-length': String(bytes.byteLength) } : {}) },
          // A stream has no length of its own: without the header, the gateway counts as it reads.
          body: declared
            ? new Blob([bytes])
            : new ReadableStream({
                start(controller) {
                  for (let offset = 0; offset < bytes.byteLength; offset += 1024 * 1024) controller.enqueue(bytes.subarray(offset, offset + 1024 * 1024))
                  controller.close()
                },
              }),
        }),
      )
    for (const declared of [true, false]) {
      const refused = await send(padded(TEN_MIB), declared)
      expect(refused.status).toBe(413)
      expect(((await refused.json()) as any).error.code).toBe('request_too_large')
    }
    upstream.script({ kind: 'video' })
    const served = await send(padded(TEN_MIB - 1), false)
    expect(served.status).toBe(200)
  })
})
