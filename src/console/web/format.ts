import type { Credits } from './api'

/**
 * A credit amount as the API wrote it, with its six decimals: the text of the JSON number is
 * kept (api.ts), padded with zeros when shorter; never converted to a float and back.
 */
export function credits(value: Credits | null | undefined): string {
  if (value === null || value === undefined) return '—'
  const text = String(value)
  if (!/^-?\d+(\.\d+)?$/.test(text)) return text
  const [whole, decimals = ''] = text.split('.')
  return `${whole}.${decimals.padEnd(6, '0')}`
}

/** A count as the API wrote it, with thin grouping for reading only. */
export function count(value: number | string | null | undefined): string {
  if (value === null || value === undefined) return '—'
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}

/** An ISO-8601 time, shortened to minutes, UTC (the API's periods are UTC too). */
export function time(value: string | null | undefined): string {
  if (!value) return '—'
  return value.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC')
}

/** The start of a UTC day `daysAgo` days before today, as the API's `since` takes it. */
export function dayStart(daysAgo = 0): string {
  const day = new Date()
  day.setUTCDate(day.getUTCDate() - daysAgo)
  return `${day.toISOString().slice(0, 10)}T00:00:00Z`
}

export function monthStart(): string {
  return `${new Date().toISOString().slice(0, 7)}-01T00:00:00Z`
}

/** A date field's value (YYYY-MM-DD) as the start of that UTC day; empty stays empty. */
export function dateToSince(value: string): string {
  return value ? `${value}T00:00:00Z` : ''
}

/** Ordering only (the top lists): the displayed amounts stay the API's text. */
export function creditsOrder(value: Credits): number {
  return Number(value)
}
