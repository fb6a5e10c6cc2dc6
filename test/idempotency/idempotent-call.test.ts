import { describe, expect, test } from 'bun:test'
import { requestFingerprint } from '../../src/idempotency/fingerprint'
import { idempotentCall } from '../../src/idempotency/idempotent-call'
import { MAX_KEPT_ANSWER_BYTES } from '../../src/idempotency/idempotent-calls'
import { testDatabases } from '../support/databases'
import { gatewaySuite } from '../support/gateway-suite'
import { rejectionOf } from '../support/rejection'

describe('request fingerprints', () => {
  test('the same JSON value whatever its key order; any other value, query or file differs', async () => {
    const base = await requestFingerprint({ a: 1, b: { c: [1, 'x'], d: null } }, '')
    expect(await requestFingerprint({ b: { d: null, c: [1, 'x'] }, a: 1 }, '')).toBe(base)
    for (const other of [
      { a: 1, b: { c: ['x', 1], d: null } },
      { a: '1', b: { c: [1, 'x'], d: null } },
      { a: 1, b: { c: [1, 'x'] } },
    ])
      expect(await requestFingerprint(other, '')).not.toBe(base)
    expect(await requestFingerprint({ a: 1, b: { c: [1, 'x'], d: null } }, '?beta=true')).not.toBe(base)
  })

  test('a form counts its fields and its files by name, type and bytes', async () => {
    const form = (bytes: number[], name = 'a.wav') => ({ model: 'whisper', file: new File([new Uint8Array(bytes)], name, { type: 'audio/wav' }) })
    const base = await requestFingerprint(form([1, 2, 3]), '')
    expect(await requestFingerprint(form([1, 2, 3]), '')).toBe(base)
    expect(await requestFingerprint(form([1, 2, 4]), '')).not.toBe(base)
    expect(await requestFingerprint(form([1, 2, 3], 'b.wav'), '')).not.toBe(base)
  })
})

for (const kind of testDatabases) {
  describe(`an idempotent call's answer (${kind.kind})`, () => {
    const suite = gatewaySuite(kind)
    const request = (key: string, requestId: string) => ({
      identity: { scope: 'key:test', path: '/v1/images/generations', key },
      fingerprint: 'same',
      requestId,
      clientSignal: new AbortController().signal,
    })

    test('an answer over 10 MiB reaches its client whole but is not kept: its retry is 422', async () => {
      const calls = suite.harness.services.idempotentCalls
      const big = new Uint8Array(MAX_KEPT_ANSWER_BYTES + 1).fill(7)
      const first = await idempotentCall(calls, request('big', 'req_big'), async () => new Response(big, { headers: { 'content-type': 'image/png' } }))
      expect((await first.arrayBuffer()).byteLength).toBe(big.byteLength)
      const retry = idempotentCall(calls, request('big', 'req_retry'), async () => {
        throw new Error('must not run')
      })
      expect(await rejectionOf(retry)).toMatchObject({ status: 422, code: 'idempotency_key_reused' })
    })

    test('an answer of exactly 10 MiB is kept and replayed byte for byte', { timeout: 30_000 }, async () => {
      const calls = suite.harness.services.idempotentCalls
      const exact = new Uint8Array(MAX_KEPT_ANSWER_BYTES)
      for (let index = 0; index < exact.length; index += 4096) exact[index] = index % 251
      const first = await idempotentCall(calls, request('exact', 'req_exact'), async () => new Response(exact, { headers: { 'content-type': 'image/png' } }))
      expect((await first.arrayBuffer()).byteLength).toBe(exact.byteLength)
      const replay = await idempotentCall(calls, request('exact', 'req_again'), async () => {
        throw new Error('must not run')
      })
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.headers.get('x-request-id')).toBe('req_exact')
      expect(replay.headers.get('content-type')).toBe('image/png')
      expect(new Uint8Array(await replay.arrayBuffer())).toEqual(exact)
    })
  })
}
