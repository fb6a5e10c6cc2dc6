import { describe, expect, test } from 'bun:test'
import { LeaseSizer } from '../../src/billing/lease-sizing'

const CAP = 5_000_000n

describe('lease sizes follow each wallet', () => {
  test("a wallet's first lease covers eight calls like the one that takes it, within the cap", () => {
    const sizer = new LeaseSizer(CAP)
    expect(sizer.wanted('w1', 1_000n)).toBe(8_000n)
    // A call whose eight copies pass the cap asks for the cap; one above the cap never reaches the sizer (it is held exactly).
    expect(sizer.wanted('w1', 1_000_000n)).toBe(CAP)
  })

  test('a lease used up quickly makes the next one as large as two seconds at its rate, at most eight times larger and never above the cap', () => {
    const sizer = new LeaseSizer(CAP)
    // 8,000 drawn in 100 ms: 160,000 per two seconds, but at most 8 x 8,000.
    sizer.observe('busy', 8_000n, 8_000n, 100)
    expect(sizer.wanted('busy', 1_000n)).toBe(64_000n)
    // 64,000 drawn in 400 ms: 320,000 per two seconds (within 8 x 64,000).
    sizer.observe('busy', 64_000n, 64_000n, 400)
    expect(sizer.wanted('busy', 1_000n)).toBe(320_000n)
    sizer.observe('busy', 1_000_000n, 1_000_000n, 10)
    expect(sizer.wanted('busy', 1_000n)).toBe(CAP)
    // Other wallets keep their own sizes.
    expect(sizer.wanted('quiet', 1_000n)).toBe(8_000n)
  })

  test('a lease that lasted long makes the next smaller, never below eight calls; a wallet gone quiet starts over', () => {
    const sizer = new LeaseSizer(CAP)
    sizer.observe('w', 1_000_000n, 1_000_000n, 20_000)
    // 1,000,000 over 20 s: 100,000 per two seconds.
    expect(sizer.wanted('w', 1_000n)).toBe(100_000n)
    sizer.observe('w', 100_000n, 2_000n, 60_000)
    expect(sizer.wanted('w', 1_000n)).toBe(8_000n)
    sizer.observe('w', 8_000n, 8_000n, 1)
    expect(sizer.wanted('w', 1_000n)).toBe(64_000n)
    sizer.forget('w')
    expect(sizer.wanted('w', 1_000n)).toBe(8_000n)
  })
})
