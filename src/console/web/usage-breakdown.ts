import { get, type Page, query, type UsageRow } from './api'
import { credits } from './format'
import { accountLabel, keyLabel, type Names } from './names'
import { creditsText, micros, sinceOf } from './periods'
import { PALETTE, type Series, stackedBars } from './series-chart'

export type Dimension = 'model' | 'key' | 'account'
export type Measure = 'cost' | 'requests'

/** Series drawn one by one; the rest are summed into one "others" series. */
const MOST_SERIES = PALETTE.length - 1

/** Every usage row of the selection: pages of 1000 rows, at most 10 of them (the chart's periods times its parties stay far below). */
export async function usageRows(values: Record<string, string>): Promise<UsageRow[]> {
  const rows: UsageRow[] = []
  let cursor: string | undefined
  for (let page = 0; page < 10; page++) {
    const answer = await get<Page<UsageRow>>(`/admin/v1/usage${query({ ...values, limit: 1000, cursor })}`)
    rows.push(...answer.data)
    cursor = answer.next_cursor ?? undefined
    if (!cursor) break
  }
  return rows
}

function partyOf(row: UsageRow, dimension: Dimension): string {
  return (dimension === 'model' ? row.model : dimension === 'key' ? row.key_id : row.account_id) ?? ''
}

function labelOf(names: Names, dimension: Dimension, party: string): string {
  if (!party) return dimension === 'key' ? '(user tokens)' : '(none)'
  if (dimension === 'key') return keyLabel(names, party)
  if (dimension === 'account') return accountLabel(names, party)
  return party
}

/**
 * Spend or requests per period, stacked by model, key or account, every period drawn (zero when
 * it had no usage). The largest parties over the range each get a series; the others are one.
 * Amounts are summed exactly, in micro-credits, never as floats.
 */
export async function usageBreakdown(
  names: Names,
  periods: readonly string[],
  group: string,
  dimension: Dimension,
  measure: Measure,
  filters: Record<string, string> = {},
): Promise<HTMLElement> {
  const since = sinceOf(periods[0] ?? '')
  const rows = await usageRows({ ...filters, group_by: `${group},${dimension}`, since })
  const byParty = new Map<string, Map<string, UsageRow>>()
  const weight = new Map<string, bigint>()
  for (const row of rows) {
    const party = partyOf(row, dimension)
    const periodsOfParty = byParty.get(party) ?? new Map<string, UsageRow>()
    periodsOfParty.set(row.period, row)
    byParty.set(party, periodsOfParty)
    weight.set(party, (weight.get(party) ?? 0n) + (measure === 'cost' ? micros(row.cost) : BigInt(row.requests)))
  }
  const ranked = [...weight.entries()].sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : 0)).map(([party]) => party)
  const shown = ranked.length > MOST_SERIES + 1 ? ranked.slice(0, MOST_SERIES) : ranked
  const rest = ranked.slice(shown.length)
  const amount = (row: UsageRow | undefined): bigint => (row ? (measure === 'cost' ? micros(row.cost) : BigInt(row.requests)) : 0n)
  const text = (value: bigint) => (measure === 'cost' ? creditsText(value) : String(value))
  const seriesOf = (name: string, parties: readonly string[]): Series => {
    const values = periods.map((period) => parties.reduce((sum, party) => sum + amount(byParty.get(party)?.get(period)), 0n))
    return { name, values: values.map((value) => Number(value) / (measure === 'cost' ? 1_000_000 : 1)), texts: values.map(text) }
  }
  const series = [
    ...shown.map((party) => seriesOf(labelOf(names, dimension, party), [party])),
    ...(rest.length ? [seriesOf(`${rest.length} others`, rest)] : []),
  ]
  const totals = periods.map((period) => ranked.reduce((sum, party) => sum + amount(byParty.get(party)?.get(period)), 0n))
  const what = measure === 'cost' ? 'Spend (credits)' : 'Requests'
  return stackedBars(`${what} by ${dimension}`, periods, series, {
    testId: 'usage-breakdown',
    total: (index) => (measure === 'cost' ? credits(creditsText(totals[index] ?? 0n)) : String(totals[index] ?? 0n)),
  })
}
