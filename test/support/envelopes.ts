import { expect } from 'bun:test'
import { googleStatusOf } from '../../src/errors/google-envelope'
import type { ErrorEnvelope } from '../../src/errors/render'
import type { Reply } from './gateway'

/** Asserts an error reply: status, code, and the envelope of the surface (docs/api.md#envelopes). */
export function expectError(reply: Reply, status: number, code: string, surface: ErrorEnvelope = 'openai'): void {
  if (surface === 'google') {
    expectGoogleError(reply, status, code)
    return
  }
  expect({ status: reply.status, code: reply.json?.error?.code }).toEqual({ status, code })
  if (surface === 'messages') {
    expect(reply.json.type).toBe('error')
    expect(Object.keys(reply.json.error).sort()).toEqual(['code', 'message', 'type'])
  } else {
    expect(Object.keys(reply.json)).toEqual(['error'])
    expect(Object.keys(reply.json.error).sort()).toEqual(['code', 'message', 'param', 'type'])
  }
  expect(typeof reply.json.error.message).toBe('string')
  expect(reply.json.error.message.length).toBeGreaterThan(0)
}

/** Google's envelope (the Gemini API): the HTTP status as `code`, its status word, and the gateway's code as the ErrorInfo reason. */
function expectGoogleError(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.json?.error?.code, reason: reply.json?.error?.details?.[0]?.reason }).toEqual({
    status,
    code: status,
    reason: code,
  })
  expect(Object.keys(reply.json)).toEqual(['error'])
  expect(Object.keys(reply.json.error).sort()).toEqual(['code', 'details', 'message', 'status'])
  expect(reply.json.error.status).toBe(googleStatusOf(status))
  expect(reply.json.error.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: code, domain: 'tollgate' }])
  expect(reply.json.error.message.length).toBeGreaterThan(0)
}

/** The gateway's code of an error reply in any envelope. */
export function errorCodeOf(reply: Reply): string {
  const error = reply.json?.error
  return typeof error?.code === 'number' ? error.details?.[0]?.reason : error?.code
}
