import { describe, expect, test } from 'bun:test'
import { keptPeriodKeys, PERIODS, periodEndOfKey, periodKey, periodKeys, periodStart } from '../../src/billing/periods'

const at = (iso: string) => new Date(iso)

describe('periods of spend limits (docs/billing.md#spend-limits-by-period)', () => {
  test('the day and the month are UTC calendar ones', () => {
    expect(periodKeys(at('2026-11-30T23:59:59.999Z'))).toMatchObject({ day: '2026-11-30', month: '2026-11' })
    expect(periodKeys(at('2026-12-01T00:00:00Z'))).toMatchObject({ day: '2026-12-01', month: '2026-12' })
    // An offset is only another way to write a UTC instant.
    expect(periodKeys(at('2026-12-01T00:30:00+01:00'))).toMatchObject({ day: '2026-11-30', month: '2026-11' })
    expect(periodStart('month', at('2026-02-28T13:00:00Z')).toISOString()).toBe('2026-02-01T00:00:00.000Z')
  })

  test('the ISO week starts on Monday 00:00 UTC and belongs to the year of its Thursday', () => {
    expect(periodStart('week', at('2026-12-06T23:59:59Z')).toISOString()).toBe('2026-11-30T00:00:00.000Z')
    expect(periodStart('week', at('2026-12-07T00:00:00Z')).toISOString()).toBe('2026-12-07T00:00:00.000Z')
    expect(periodKey('week', at('2026-12-06T23:59:59Z'))).toBe('2026-W49')
    expect(periodKey('week', at('2026-12-07T00:00:00Z'))).toBe('2026-W50')
    // 2027-01-01 is a Friday: its week's Thursday is 2026-12-31, in 2026's 53rd week.
    expect(periodKey('week', at('2027-01-01T00:00:00Z'))).toBe('2026-W53')
    expect(periodKey('week', at('2027-01-04T00:00:00Z'))).toBe('2027-W01')
    // 2024-12-30 is a Monday whose Thursday is 2025-01-02: week 1 of 2025.
    expect(periodKey('week', at('2024-12-30T00:00:00Z'))).toBe('2025-W01')
    expect(periodKey('week', at('2024-12-29T23:59:59Z'))).toBe('2024-W52')
  })

  test('a period known by its key ends where the next one starts, across years and ISO week 53', () => {
    // Every 7 hours from December 2025 to March 2028: past 2026's 53-week year and a leap day.
    for (let time = Date.parse('2025-12-01T03:00:00Z'); time < Date.parse('2028-03-05T00:00:00Z'); time += 7 * 3_600_000) {
      const date = new Date(time)
      for (const period of PERIODS) {
        const end = periodEndOfKey(period, periodKey(period, date))
        expect(end.getTime()).toBeGreaterThan(time)
        expect(periodKey(period, end)).not.toBe(periodKey(period, date))
        expect(periodKey(period, new Date(end.getTime() - 1))).toBe(periodKey(period, date))
      }
    }
    expect(periodEndOfKey('week', '2026-W53').toISOString()).toBe('2027-01-04T00:00:00.000Z')
    expect(periodEndOfKey('month', '2026-12').toISOString()).toBe('2027-01-01T00:00:00.000Z')
    expect(periodEndOfKey('day', '2028-02-28').toISOString()).toBe('2028-02-29T00:00:00.000Z')
  })

  test('the keys kept by the sweep are the current periods and the ones just before', () => {
    expect(keptPeriodKeys(at('2027-01-01T08:00:00Z')).sort()).toEqual(['2026-12', '2026-12-31', '2026-W52', '2026-W53', '2027-01', '2027-01-01'])
    expect(keptPeriodKeys(at('2026-03-01T00:00:00Z')).sort()).toEqual(['2026-02', '2026-02-28', '2026-03', '2026-03-01', '2026-W08', '2026-W09'])
  })
})
