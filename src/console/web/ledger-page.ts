import { download, get, type LedgerEntry, type Page, query } from './api'
import { field, h, input, select, show } from './dom'
import { dateToSince } from './format'
import { ledgerTable } from './ledger-table'
import { loadNames, type Names, nameChoices } from './names'

const KINDS = ['', 'charge', 'topup', 'adjustment', 'hold', 'release', 'expire']
const FILTERS = ['request_id', 'account_id', 'key_id', 'user_sub', 'model'] as const

/** Ledger entries, newest first, by request id or any other filter, a page at a time. */
export async function ledgerPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const filter = (name: (typeof FILTERS)[number]) => input(name, { value: params.get(name) ?? '' })
  const names = await loadNames()
  const inputs = {
    request_id: filter('request_id'),
    account_id: select('account_id', nameChoices(names, 'account'), params.get('account_id') ?? ''),
    key_id: select('key_id', nameChoices(names, 'key'), params.get('key_id') ?? ''),
    user_sub: filter('user_sub'),
    model: filter('model'),
  }
  const kind = select(
    'kind',
    KINDS.map((value): [string, string] => [value, value || 'any kind']),
    params.get('kind') ?? '',
  )
  const since = input('since', { type: 'date', value: params.get('since') ?? '' })
  const until = input('until', { type: 'date', value: params.get('until') ?? '' })
  const selection = {
    ...Object.fromEntries(FILTERS.map((name) => [name, inputs[name].value.trim()])),
    kind: kind.value,
    since: dateToSince(since.value),
    until: dateToSince(until.value),
  }
  const list = h('div', {})
  const more = h('div', {})
  show(
    main,
    h('h1', {}, 'Ledger'),
    h(
      'form',
      {
        class: 'card',
        onsubmit: (event) => {
          event.preventDefault()
          const next = new URLSearchParams()
          for (const name of FILTERS) if (inputs[name].value.trim()) next.set(name, inputs[name].value.trim())
          if (kind.value) next.set('kind', kind.value)
          if (since.value) next.set('since', since.value)
          if (until.value) next.set('until', until.value)
          const hash = `#/ledger?${next.toString()}`
          if (location.hash === hash) dispatchEvent(new HashChangeEvent('hashchange'))
          else location.hash = hash
        },
      },
      h(
        'div',
        { class: 'grid' },
        field('Request id', inputs.request_id),
        field('Account', inputs.account_id),
        field('Key', inputs.key_id),
        field('User (sub)', inputs.user_sub),
        field('Model', inputs.model),
        field('Kind', kind),
        field('Since (UTC day, inclusive)', since),
        field('Until (UTC day, exclusive)', until),
      ),
      h('button', { type: 'submit' }, 'Find entries'),
      ' ',
      h(
        'button',
        { type: 'button', class: 'secondary', onclick: () => download(`/admin/v1/ledger${query({ ...selection, format: 'csv' })}`, 'ledger.csv') },
        'Download CSV',
      ),
    ),
    list,
    more,
  )
  await loadEntries(list, more, names, selection)
}

async function loadEntries(list: HTMLElement, more: HTMLElement, names: Names, selection: Record<string, string>, cursor?: string): Promise<void> {
  const page = await get<Page<LedgerEntry>>(`/admin/v1/ledger${query({ ...selection, limit: 100, cursor })}`)
  list.append(ledgerTable(cursor ? 'Older entries' : 'Entries, newest first', page.data, names))
  show(
    more,
    page.next_cursor
      ? h(
          'button',
          { type: 'button', class: 'secondary', onclick: () => loadEntries(list, more, names, selection, page.next_cursor ?? undefined) },
          'Older entries',
        )
      : null,
  )
}
