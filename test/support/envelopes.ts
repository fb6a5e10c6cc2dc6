import { expect } from 'bun:test'
import type { Reply } from './gateway'

/** Asserts an error reply: status, code, and the envelope of the surface (docs/api.md#envelopes). */
export function expectError(reply: Reply, status: number, code: string, surface: 'openai' | 'messages' = 'openai'): void {
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
