import type { Credits } from './api'

/** The time ranges the dashboard draws: periods of the API's `group_by`, and how many up to now. */
export const RANGES = {
  '30d': { label: 'Last 30 days, by day', group: 'day', count: 30 },
  '48h': { label: 'Last 48 hours, by hour', group: 'hour', count: 48 },
  '12m': { label: 'Last 12 months, by month', group: 'month', count: 12 },
} as const
export type RangeName = keyof typeof RANGES

/**
 * The `count` periods up to and including the current one, oldest first, named as the API
 * names them (`2026-11-03T14:00:00Z`, `2026-11-03`, `2026-11`), all UTC: every period is
 * listed, so one without usage is drawn as zero rather than left out.
 */
export function periodsUpToNow(group: 'hour' | 'day' | 'month', count: number, now = new Date()): string[] {
  return Array.from({ length: count }, (_, index) => {
    const back = count - 1 - index
    const at = new Date(now.getTime())
    if (group === 'hour') {
      at.setUTCMinutes(0, 0, 0)
      at.setUTCHours(at.getUTCHours() - back)
      return `${at.toISOString().slice(0, 13)}:00:00Z`
    }
    if (group === 'day') {
      at.setUTCHours(0, 0, 0, 0)
      at.setUTCDate(at.getUTCDate() - back)
      return at.toISOString().slice(0, 10)
    }
    at.setUTCHours(0, 0, 0, 0)
    at.setUTCDate(1)
    at.setUTCMonth(at.getUTCMonth() - back)
    return at.toISOString().slice(0, 7)
  })
}

/**
 * Every period from the one holding `from` to the one holding `to` (API period names or
 * instants), oldest first; at most `most`, the newest kept.
 */
export function periodsBetween(group: 'hour' | 'day' | 'month', from: string, to: string, most = 400): string[] {
  const end = new Date(sinceOf(to))
  const first = new Date(sinceOf(from))
  if (Number.isNaN(first.getTime())) return []
  const start = new Date(sinceOf(periodsUpToNow(group, 1, first)[0] ?? ''))
  if (Number.isNaN(end.getTime()) || Number.isNaN(start.getTime()) || start > end) return []
  const step = { hour: 3_600_000, day: 86_400_000, month: 0 }[group]
  const count =
    group === 'month'
      ? (end.getUTCFullYear() - start.getUTCFullYear()) * 12 + end.getUTCMonth() - start.getUTCMonth() + 1
      : Math.floor((end.getTime() - start.getTime()) / step) + 1
  return periodsUpToNow(group, Math.min(most, count), end)
}

/** The first period's start, as the API's `since` takes it. */
export function sinceOf(period: string): string {
  if (period.length === 7) return `${period}-01T00:00:00Z`
  if (period.length === 10) return `${period}T00:00:00Z`
  return period
}

/** An amount as whole micro-credits, exactly (the API writes at most six decimals). */
export function micros(value: Credits | null | undefined): bigint {
  const text = String(value ?? '0')
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(text)
  if (!match) return 0n
  const whole = BigInt(match[2] ?? '0') * 1_000_000n + BigInt((match[3] ?? '').padEnd(6, '0'))
  return match[1] ? -whole : whole
}

/** Micro-credits as the API writes credits: six decimals. */
export function creditsText(value: bigint): string {
  const sign = value < 0n ? '-' : ''
  const absolute = value < 0n ? -value : value
  return `${sign}${absolute / 1_000_000n}.${String(absolute % 1_000_000n).padStart(6, '0')}`
}
