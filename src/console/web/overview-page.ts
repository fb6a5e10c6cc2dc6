import { get, type Page, query, type UsageRow } from './api'
import { quotasCard, walletsCard } from './budgets'
import { field, h, select, show } from './dom'
import { count, credits, dayStart, monthStart } from './format'
import { loadNames } from './names'
import { periodsUpToNow, RANGES, type RangeName } from './periods'
import { requestHealth } from './request-health'
import { type Dimension, type Measure, usageBreakdown } from './usage-breakdown'

const usage = (values: Record<string, string>) => get<Page<UsageRow>>(`/admin/v1/usage${query(values)}`)

const DIMENSIONS: readonly [Dimension, string][] = [
  ['model', 'model'],
  ['key', 'key'],
  ['account', 'account'],
]
const MEASURES: readonly [Measure, string][] = [
  ['cost', 'spend'],
  ['requests', 'requests'],
]

function choice<Value extends string>(value: string | null, allowed: readonly Value[], fallback: Value): Value {
  return allowed.find((item) => item === value) ?? fallback
}

/**
 * The dashboard: spend today and this month; spend or requests over time stacked by model, key
 * or account; error rate and latency; wallets and quotas as bars. The chart's choices live in the
 * route (`#/overview?range=48h&by=key&measure=requests`), so a view can be linked.
 */
export async function overviewPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const rangeName = choice(params.get('range'), Object.keys(RANGES) as RangeName[], '30d')
  const dimension = choice(params.get('by'), ['model', 'key', 'account'], 'model')
  const measure = choice(params.get('measure'), ['cost', 'requests'], 'cost')
  const range = RANGES[rangeName]
  const periods = periodsUpToNow(range.group, range.count)
  const names = await loadNames()
  const [today, month, breakdown, health, quotas] = await Promise.all([
    usage({ group_by: 'day', since: dayStart() }),
    usage({ group_by: 'month', since: monthStart() }),
    usageBreakdown(names, periods, range.group, dimension, measure),
    requestHealth(periods, range.group),
    quotasCard(names),
  ])
  const card = (label: string, row: UsageRow | undefined) => {
    const id = label.toLowerCase().replaceAll(' ', '-')
    return h(
      'section',
      { class: 'card stat', 'aria-label': label },
      h('h2', {}, label),
      h('p', { class: 'big', 'data-testid': `${id}-cost` }, credits(row?.cost ?? '0'), h('small', { class: 'unit' }, ' credits')),
      h('p', {}, h('span', { 'data-testid': `${id}-requests` }, count(row?.requests ?? 0)), row?.requests === 1 ? ' billed request' : ' billed requests'),
    )
  }
  const controls = chartControls(rangeName, dimension, measure)
  show(
    main,
    h('h1', {}, 'Overview'),
    h('div', { class: 'stats' }, card('Spend today', today.data[0]), card('Spend this month', month.data[0])),
    controls,
    breakdown,
    ...health,
    h('div', { class: 'columns' }, walletsCard(names), quotas),
  )
}

/** The range, the breakdown and the measure of the charts; a change redraws the page. */
function chartControls(rangeName: RangeName, dimension: Dimension, measure: Measure): HTMLElement {
  const range = select(
    'range',
    Object.entries(RANGES).map(([name, entry]): [string, string] => [name, entry.label]),
    rangeName,
  )
  const by = select('by', DIMENSIONS, dimension)
  const what = select('measure', MEASURES, measure)
  const redraw = () => {
    location.hash = `#/overview?${new URLSearchParams({ range: range.value, by: by.value, measure: what.value }).toString()}`
  }
  for (const control of [range, by, what]) control.addEventListener('change', redraw)
  return h('div', { class: 'card inline controls' }, field('Period', range), field('Stacked by', by), field('Showing', what))
}
