import { ApiError, get, query, type RequestStatsRow } from './api'
import { h, notice } from './dom'
import { sinceOf } from './periods'
import { lines } from './series-chart'

/** The filters the stats take besides time: one account, key or model. */
export type StatsFilter = { account_id?: string; key_id?: string; model?: string }

/**
 * Error rate and latency per period from GET /admin/v1/requests/stats, which lists only periods
 * with requests: a period without any has an error rate of zero and no latency (the line breaks).
 * Refused requests (4xx) and failed ones (5xx) are counted apart. Only calls to the billable API
 * count: the console's own admin calls would crowd them out.
 */
export async function requestHealth(periods: readonly string[], group: string, filter: StatsFilter = {}): Promise<HTMLElement[]> {
  if (group !== 'hour' && group !== 'day')
    return [notice('Error rates and latency are kept by hour and by day: choose the last 30 days or 48 hours to see them.', 'ok')]
  let rows: RequestStatsRow[]
  try {
    rows = (
      await get<{ data: RequestStatsRow[] }>(`/admin/v1/requests/stats${query({ group_by: group, kind: 'api', since: sinceOf(periods[0] ?? ''), ...filter })}`)
    ).data
  } catch (error) {
    if (error instanceof ApiError && error.status === 404)
      return [notice('This gateway records no request activity yet: error rates and latency appear once it does.', 'ok')]
    throw error
  }
  const byPeriod = new Map(rows.map((row) => [row.period, row]))
  const at = (period: string) => byPeriod.get(period)
  const percent = (part: number, whole: number) => (whole > 0 ? Number(((100 * part) / whole).toFixed(2)) : 0)
  return [
    h(
      'div',
      { class: 'columns' },
      lines(
        'Refused and failed requests (% of requests)',
        periods,
        [
          { name: 'refused (4xx)', values: periods.map((period) => percent(at(period)?.refused ?? 0, at(period)?.requests ?? 0)) },
          { name: 'failed (5xx)', values: periods.map((period) => percent(at(period)?.failed ?? 0, at(period)?.requests ?? 0)) },
        ],
        { unit: '%', testId: 'error-rate', half: true },
      ),
      lines(
        'Latency (ms)',
        periods,
        [
          { name: 'p50', values: periods.map((period) => at(period)?.p50_ms ?? null) },
          { name: 'p95', values: periods.map((period) => at(period)?.p95_ms ?? null) },
        ],
        { unit: ' ms', testId: 'latency', half: true },
      ),
    ),
  ]
}
