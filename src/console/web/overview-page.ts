import { get, type Page, query, type UsageRow } from './api'
import { type Bar, barChart } from './chart'
import { append, h, show, table } from './dom'
import { count, credits, creditsOrder, dayStart, monthStart } from './format'

const usage = (values: Record<string, string>) => get<Page<UsageRow>>(`/admin/v1/usage${query(values)}`)

/** Spend today and this month, the month's top models and keys, and 30 days of daily spend. */
export async function overviewPage(main: HTMLElement): Promise<void> {
  const [today, month, daily, models, keys] = await Promise.all([
    usage({ group_by: 'day', since: dayStart() }),
    usage({ group_by: 'month', since: monthStart() }),
    usage({ group_by: 'day', since: dayStart(29) }),
    usage({ group_by: 'month,model', since: monthStart(), limit: '1000' }),
    usage({ group_by: 'month,key', since: monthStart(), limit: '1000' }),
  ])
  const card = (label: string, row: UsageRow | undefined) =>
    h(
      'section',
      { class: 'card stat', 'aria-label': label },
      h('h2', {}, label),
      h(
        'p',
        { class: 'big', 'data-testid': `${label.toLowerCase().replaceAll(' ', '-')}-cost` },
        credits(row?.cost ?? '0'),
        h('small', { class: 'unit' }, ' credits'),
      ),
      h(
        'p',
        {},
        h('span', { 'data-testid': `${label.toLowerCase().replaceAll(' ', '-')}-requests` }, count(row?.requests ?? 0)),
        row?.requests === 1 ? ' request' : ' requests',
      ),
    )
  const top = (rows: UsageRow[]) => [...rows].sort((a, b) => creditsOrder(b.cost) - creditsOrder(a.cost)).slice(0, 5)
  show(
    main,
    h('h1', {}, 'Overview'),
    h('div', { class: 'stats' }, card('Spend today', today.data[0]), card('Spend this month', month.data[0])),
    barChart('Daily spend, last 30 days (credits, UTC days)', lastDays(daily.data, 30)),
  )
  append(main, [
    h(
      'div',
      { class: 'columns' },
      table(
        'Top models this month',
        ['Model', 'Requests', 'Credits'],
        top(models.data).map((row) => [row.model ?? '—', count(row.requests), credits(row.cost)]),
        [1, 2],
      ),
      table(
        'Top keys this month',
        ['Key', 'Requests', 'Credits'],
        top(keys.data).map((row) => [
          h('a', { href: `#/ledger?key_id=${encodeURIComponent(row.key_id ?? '')}` }, row.key_id ?? '—'),
          count(row.requests),
          credits(row.cost),
        ]),
        [1, 2],
      ),
    ),
  ])
}

/** One bar per day, oldest first: the API leaves out days without usage, which are drawn empty. */
function lastDays(rows: UsageRow[], days: number): Bar[] {
  const costs = new Map(rows.map((row) => [row.period, row.cost]))
  return Array.from({ length: days }, (_, index) => {
    const day = dayStart(days - 1 - index).slice(0, 10)
    return { label: day, value: costs.get(day) ?? '0' }
  })
}
