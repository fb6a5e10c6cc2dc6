/**
 * The periods spend limits count in (docs/billing.md#spend-limits-by-period), all in UTC: the
 * calendar day, the ISO week (from Monday 00:00) and the calendar month. Each period is known
 * by a key made from its start, so a new period starts from 0 without any job: its spend rows
 * are new rows.
 */
export const PERIODS = ['day', 'week', 'month'] as const

export type Period = (typeof PERIODS)[number]

/** A limit per period in micro-credits; null: no limit in that period. */
export type PeriodQuotas = Record<Period, bigint | null>

/** The keys of the periods a time falls in: `YYYY-MM-DD`, `YYYY-Www` (ISO week) and `YYYY-MM`. */
export type PeriodKeys = Record<Period, string>

export const NO_QUOTAS: PeriodQuotas = { day: null, week: null, month: null }

/** True when any period has a limit. */
export function hasQuota(quotas: PeriodQuotas): boolean {
  return quotas.day !== null || quotas.week !== null || quotas.month !== null
}

const DAY_MS = 86_400_000

/** When the period that `date` falls in began (UTC). */
export function periodStart(period: Period, date: Date): Date {
  const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())
  if (period === 'day') return new Date(day)
  if (period === 'month') return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1))
  // getUTCDay: Sunday 0 ... Saturday 6; an ISO week starts on Monday.
  const sinceMonday = (date.getUTCDay() + 6) % 7
  return new Date(day - sinceMonday * DAY_MS)
}

/** The key of the period `date` falls in. */
export function periodKey(period: Period, date: Date): string {
  if (period === 'day') return date.toISOString().slice(0, 10)
  if (period === 'month') return date.toISOString().slice(0, 7)
  // ISO 8601 week notation: the week belongs to the year of its Thursday.
  const thursday = new Date(periodStart('week', date).getTime() + 3 * DAY_MS)
  const year = thursday.getUTCFullYear()
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1
  return `${year}-W${String(week).padStart(2, '0')}`
}

/** When the period known by `key` ends (UTC): the start of the next one, when its limit resets. */
export function periodEndOfKey(period: Period, key: string): Date {
  const [year = 0, second = 1] = key.split(/-W?/).map(Number)
  if (period === 'month') return new Date(Date.UTC(year, second, 1))
  if (period === 'day') return new Date(Date.parse(`${key}T00:00:00Z`) + DAY_MS)
  // January 4th is always in week 1 of its ISO year.
  const firstMonday = periodStart('week', new Date(Date.UTC(year, 0, 4)))
  return new Date(firstMonday.getTime() + second * 7 * DAY_MS)
}

/** The keys of the periods `date` falls in. */
export function periodKeys(date: Date): PeriodKeys {
  return { day: periodKey('day', date), week: periodKey('week', date), month: periodKey('month', date) }
}

/** The keys of the periods `date` falls in and of the periods just before them: spend rows of any other period are past and may go. */
export function keptPeriodKeys(date: Date): string[] {
  const keys = Object.values(periodKeys(date))
  const dayBefore = new Date(periodStart('day', date).getTime() - DAY_MS)
  const weekBefore = new Date(periodStart('week', date).getTime() - 7 * DAY_MS)
  const monthBefore = new Date(periodStart('month', date).getTime() - DAY_MS)
  return [...keys, periodKey('day', dayBefore), periodKey('week', weekBefore), periodKey('month', monthBefore)]
}

/** How a refusal names each period. */
export const PERIOD_WORDS: Record<Period, string> = {
  day: 'daily quota (per UTC day)',
  week: 'weekly quota (per ISO week, from Monday 00:00 UTC)',
  month: 'monthly quota (per UTC calendar month)',
}
