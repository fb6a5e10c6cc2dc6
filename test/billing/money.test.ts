import { describe, expect, test } from 'bun:test'
import { creditsJson, creditsToMicros, microsToCredits } from '../../src/billing/money'

describe('credits at the JSON edge', () => {
  test('exact conversion for up to six decimals', () => {
    expect(creditsToMicros(0.1)).toBe(100_000n)
    expect(creditsToMicros(10.123456)).toBe(10_123_456n)
    expect(creditsToMicros(-0.000001)).toBe(-1n)
    expect(creditsToMicros(1_000_000_000)).toBe(1_000_000_000_000_000n)
    expect(creditsToMicros(0.3)! - creditsToMicros(0.1)! - creditsToMicros(0.2)!).toBe(0n)
  })
  test('refuses more decimals, non-finite and absurd amounts', () => {
    for (const bad of [0.0000001, 1.1234567, Number.NaN, Number.POSITIVE_INFINITY, 1e12]) expect(creditsToMicros(bad)).toBeUndefined()
  })
  test('round trip', () => {
    for (const micros of [0n, 1n, -1n, 999_999n, 123_456_789n, -5_000_000n, 10n ** 15n]) {
      expect(creditsToMicros(microsToCredits(micros))).toBe(micros)
    }
    expect(microsToCredits(100_000n)).toBe(0.1)
  })
})

describe('credit amounts in JSON', () => {
  test('are written with their exact six decimals, never in exponent notation, and parse back to the same micro-credits', () => {
    const cases: [bigint, string][] = [
      [8n, '0.000008'],
      [0n, '0.000000'],
      [1_000_000n, '1.000000'],
      [-1_234_567_891n, '-1234.567891'],
      [999_999_999_999_999n, '999999999.999999'],
    ]
    for (const [micros, text] of cases) {
      const json = JSON.stringify({ cost: creditsJson(micros) })
      expect(json).toBe(`{"cost":${text}}`)
      expect(creditsToMicros(JSON.parse(json).cost)).toBe(micros)
    }
  })
})
