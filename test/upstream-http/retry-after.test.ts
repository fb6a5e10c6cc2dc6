import { describe, expect, test } from 'bun:test'
import { MAX_RETRY_AFTER_MS, retryAfterMs } from '../../src/upstream-http/retry-after'

describe('retryAfterMs', () => {
  const now = Date.parse('2025-03-01T12:00:00Z')
  test('whole seconds and HTTP dates, bounded', () => {
    expect(retryAfterMs('2', now)).toBe(2000)
    expect(retryAfterMs(' 45 ', now)).toBe(45_000)
    expect(retryAfterMs('Sat, 01 Mar 2025 12:00:37 GMT', now)).toBe(37_000)
    expect(retryAfterMs('Saturday, 01-Mar-25 12:01:00 GMT', now)).toBe(60_000)
    expect(retryAfterMs('86400', now)).toBe(MAX_RETRY_AFTER_MS)
    expect(retryAfterMs('Sun, 01 Mar 2026 12:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_MS)
    expect(retryAfterMs(`1${'0'.repeat(400)}`, now)).toBeUndefined()
  })
  test('anything else, and no wait at all, is ignored', () => {
    for (const value of [null, '', 'soon', '1.5', '-3', '1e3', '0', 'Sat, 01 Mar 2025 11:59:00 GMT', 'Sat Mar  1 12:00:30 2025', '2025-03-01T12:00:30Z'])
      expect(retryAfterMs(value, now)).toBeUndefined()
  })
})
