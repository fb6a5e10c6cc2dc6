import { type Credits, download, get, type Page, query, type UsageRow } from './api'
import { barChart } from './chart'
import { append, type Child, field, h, input, select, show, table } from './dom'
import { count, credits, dateToSince } from './format'
import { accountCell, keyCell, loadNames, type Names, nameChoices } from './names'
import { periodsBetween } from './periods'
import { usageBreakdown } from './usage-breakdown'

const DIMENSIONS: readonly [string, string][] = [
  ['', 'nothing else'],
  ['account', 'account'],
  ['key', 'key'],
  ['user', 'user'],
  ['model', 'model'],
]

/** Usage summaries with the API's filters; the filters live in the route, so a view can be linked. */
export async function usagePage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const period = select('group-by', ['hour', 'day', 'month'], params.get('period') ?? 'day')
  const by = select('by', DIMENSIONS, params.get('by') ?? '')
  const names = await loadNames()
  const account = select('account_id', nameChoices(names, 'account'), params.get('account_id') ?? '')
  const key = select('key_id', nameChoices(names, 'key'), params.get('key_id') ?? '')
  const model = input('model', { value: params.get('model') ?? '' })
  const since = input('since', { type: 'date', value: params.get('since') ?? '' })
  const until = input('until', { type: 'date', value: params.get('until') ?? '' })
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: (event) => {
        event.preventDefault()
        const next = new URLSearchParams()
        for (const [name, value] of [
          ['period', period.value],
          ['by', by.value],
          ['account_id', account.value.trim()],
          ['key_id', key.value.trim()],
          ['model', model.value.trim()],
          ['since', since.value],
          ['until', until.value],
        ] as const) {
          if (value) next.set(name, value)
        }
        const hash = `#/usage?${next.toString()}`
        if (location.hash === hash) dispatchEvent(new HashChangeEvent('hashchange'))
        else location.hash = hash
      },
    },
    h(
      'div',
      { class: 'grid' },
      field('Group by', period),
      field('and by', by),
      field('Account', account),
      field('Key', key),
      field('Model', model),
      field('Since (UTC day, inclusive)', since),
      field('Until (UTC day, exclusive)', until),
    ),
    h('button', { type: 'submit' }, 'Show usage'),
  )
  const selection = {
    group_by: [period.value, by.value].filter(Boolean).join(','),
    account_id: account.value.trim(),
    key_id: key.value.trim(),
    model: model.value.trim(),
    since: dateToSince(since.value),
    until: dateToSince(until.value),
  }
  // One page of up to 1000 rows draws the chart; "More rows" adds the next pages to the table.
  const answer = await get<Page<UsageRow>>(`/admin/v1/usage${query({ ...selection, limit: 1000 })}`)
  const dimension = by.value
  const group = period.value as 'hour' | 'day' | 'month'
  // Every period of the selection is drawn, one without usage as zero: from `since` (or the
  // oldest row of the page) to the period before `until` (or now).
  const oldest = answer.data[answer.data.length - 1]?.period
  const last = selection.until ? new Date(Date.parse(selection.until) - 1).toISOString() : new Date().toISOString()
  const periods = selection.since || oldest ? periodsBetween(group, selection.since || oldest || '', last) : []
  const costs = new Map(answer.data.map((row) => [row.period, row.cost]))
  const filters = { account_id: selection.account_id, key_id: selection.key_id, model: selection.model }
  const csv = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => download(`/admin/v1/usage${query({ ...selection, format: 'csv' })}`, 'usage.csv') },
    'Download CSV',
  )
  const rows = h('div', {})
  const more = h('div', {})
  show(main, h('h1', {}, 'Usage'), form)
  append(main, [await usageChart(names, periods, group, dimension, filters, costs), h('p', { class: 'toolbar' }, csv), rows, more])
  showRows(names, rows, more, selection, dimension, answer, false)
}

/** Spend per period, every period drawn: stacked by model, key or account when grouped by one. */
async function usageChart(
  names: Names,
  periods: string[],
  group: 'hour' | 'day' | 'month',
  dimension: string,
  filters: Record<string, string>,
  costs: Map<string, Credits>,
): Promise<HTMLElement> {
  if (periods.length === 0) return h('p', { class: 'empty' }, 'No usage in this selection.')
  if (dimension === 'model' || dimension === 'key' || dimension === 'account') return usageBreakdown(names, periods, group, dimension, 'cost', filters)
  if (dimension) return h('p', { class: 'muted' }, 'The chart is drawn by model, key or account; the table has every row.')
  return barChart(
    `Spend per ${group} (credits, UTC)`,
    periods.map((label) => ({ label, value: costs.get(label) ?? '0' })),
  )
}

function showRows(
  names: Names,
  rows: HTMLElement,
  more: HTMLElement,
  selection: Record<string, string>,
  dimension: string,
  page: Page<UsageRow>,
  later: boolean,
): void {
  rows.append(
    table(
      later ? 'More usage' : 'Usage, newest first',
      ['Period', ...(dimension ? [dimension] : []), 'Requests', 'Input', 'Output', 'Cache read', 'Cache write', 'Credits', 'Uncollected'],
      page.data.map((row) => [
        row.period,
        ...(dimension ? [dimensionCell(names, dimension, row)] : []),
        count(row.requests),
        count(row.input_tokens),
        count(row.output_tokens),
        count(row.cache_read_tokens),
        count(row.cache_write_tokens),
        credits(row.cost),
        credits(row.uncollected),
      ]),
      dimension ? [2, 3, 4, 5, 6, 7, 8] : [1, 2, 3, 4, 5, 6, 7],
    ),
  )
  const cursor = page.next_cursor
  show(
    more,
    cursor
      ? h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: async () =>
              showRows(
                names,
                rows,
                more,
                selection,
                dimension,
                await get<Page<UsageRow>>(`/admin/v1/usage${query({ ...selection, limit: 1000, cursor })}`),
                true,
              ),
          },
          'More rows',
        )
      : null,
  )
}

function dimensionCell(names: Names, dimension: string, row: UsageRow): Child {
  if (dimension === 'account') return accountCell(names, row.account_id)
  if (dimension === 'key') return keyCell(names, row.key_id)
  if (dimension === 'user') return row.user_sub ?? '—'
  return row.model ?? '—'
}
