import { download, get, type Page, query, type RequestRecord } from './api'
import { type Child, field, h, input, select, show, table } from './dom'
import { count, credits, dateToSince } from './format'
import { accountCell, keyCell, loadNames, type Names, nameChoices } from './names'

const FILTERS = ['kind', 'key_id', 'account_id', 'model', 'status', 'error_code', 'session_id', 'since', 'until'] as const

/** The `kind` choice that sends no `kind` filter. */
const EVERY_CALL = 'all'

/** A status as a badge: green for 2xx, amber for 4xx (refused), red for 5xx (failed) and 499 (the client left). */
export function statusBadge(status: number): HTMLElement {
  const tone = status < 400 ? 'delivered' : status < 500 && status !== 499 ? 'pending' : 'failed'
  return h('span', { class: `status status-${tone}` }, String(status))
}

/** The model asked for and, when another served (an alias), the one that did. */
export function modelCell(record: Pick<RequestRecord, 'model_requested' | 'model'>): Child {
  if (!record.model_requested && !record.model) return '—'
  if (!record.model || record.model === record.model_requested) return h('code', {}, record.model_requested ?? record.model ?? '')
  return h('span', { class: 'stack' }, h('code', {}, record.model_requested ?? '—'), h('small', {}, '→ ', record.model))
}

function tokensText(record: RequestRecord): string {
  return record.tokens ? `${count(record.tokens.input)} in / ${count(record.tokens.output)} out` : 'no tokens'
}

/**
 * Every request the gateway recorded (billed or not: refused, failed, client-closed), newest
 * first, with the API's filters kept in the route; each row leads to its request's page.
 */
export async function activityPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const names = await loadNames()
  const inputs = {
    // The console's own calls are admin calls: left out unless asked for.
    kind: select(
      'kind',
      [
        ['api', 'API calls'],
        ['admin', 'Admin API calls'],
        [EVERY_CALL, 'Every call'],
      ],
      params.get('kind') ?? 'api',
    ),
    key_id: select('key_id', nameChoices(names, 'key'), params.get('key_id') ?? ''),
    account_id: select('account_id', nameChoices(names, 'account'), params.get('account_id') ?? ''),
    model: input('model', { value: params.get('model') ?? '', placeholder: 'asked for or served' }),
    status: input('status', { value: params.get('status') ?? '', placeholder: '429, 4xx or 5xx', pattern: '\\d{3}|[1-5]xx' }),
    error_code: input('error_code', { value: params.get('error_code') ?? '', placeholder: 'insufficient_balance' }),
    session_id: input('session_id', { value: params.get('session_id') ?? '' }),
    since: input('since', { type: 'date', value: params.get('since') ?? '' }),
    until: input('until', { type: 'date', value: params.get('until') ?? '' }),
  }
  const selection: Record<string, string> = {}
  for (const name of FILTERS) {
    const value = inputs[name].value.trim()
    if (value && value !== EVERY_CALL) selection[name] = name === 'since' || name === 'until' ? dateToSince(value) : value
  }
  const list = h('div', {})
  const more = h('div', {})
  // The first page is read before the page is drawn: while it loads, the page says so.
  const first = await requestsPage(selection)
  show(
    main,
    h('h1', {}, 'Activity'),
    h(
      'form',
      {
        class: 'card',
        'aria-label': 'Filters',
        onsubmit: (event) => {
          event.preventDefault()
          const next = new URLSearchParams()
          for (const name of FILTERS) if (inputs[name].value.trim()) next.set(name, inputs[name].value.trim())
          const hash = `#/activity?${next.toString()}`
          if (location.hash === hash) dispatchEvent(new HashChangeEvent('hashchange'))
          else location.hash = hash
        },
      },
      h(
        'div',
        { class: 'grid' },
        field('Calls', inputs.kind),
        field('Key', inputs.key_id),
        field('Account', inputs.account_id),
        field('Model', inputs.model),
        field('Status', inputs.status),
        field('Error code', inputs.error_code),
        field('Session', inputs.session_id),
        field('Since (UTC day, inclusive)', inputs.since),
        field('Until (UTC day, exclusive)', inputs.until),
      ),
      h('button', { type: 'submit' }, 'Find requests'),
      h(
        'button',
        { type: 'button', class: 'secondary', onclick: () => download(`/admin/v1/requests${query({ ...selection, format: 'csv' })}`, 'requests.csv') },
        'Download CSV',
      ),
    ),
    list,
    more,
  )
  showRequests(list, more, names, selection, first, false)
}

function requestsPage(selection: Record<string, string>, cursor?: string): Promise<Page<RequestRecord>> {
  return get<Page<RequestRecord>>(`/admin/v1/requests${query({ ...selection, limit: 100, cursor })}`)
}

function showRequests(list: HTMLElement, more: HTMLElement, names: Names, selection: Record<string, string>, page: Page<RequestRecord>, later: boolean): void {
  list.append(
    table(
      later ? 'Older requests' : 'Requests, newest first',
      ['Time', 'Status', 'Route', 'Model', 'Key, account', 'Attempts', 'Credits, tokens', 'Duration'],
      page.data.map((record) => [
        // The time leads to the request's page; its id is on hover.
        h(
          'a',
          {
            href: `#/request?id=${encodeURIComponent(record.request_id)}`,
            'aria-label': `Request ${record.request_id}`,
            title: record.request_id,
            'data-request-id': record.request_id,
          },
          h('span', { class: 'stack' }, record.created_at.slice(11, 19), h('small', {}, record.created_at.slice(0, 10))),
        ),
        h('span', { class: 'stack' }, statusBadge(record.status), record.error_code ? h('small', {}, record.error_code) : null),
        h('span', { class: 'stack' }, h('code', {}, record.route), h('small', {}, record.method)),
        modelCell(record),
        h(
          'span',
          { class: 'stack' },
          record.key_id ? keyCell(names, record.key_id) : (record.user_sub ?? '—'),
          h('small', {}, accountCell(names, record.account_id)),
        ),
        record.attempts.length ? record.attempts.map((attempt) => attempt.provider).join(' → ') : '—',
        h('span', { class: 'stack' }, credits(record.cost), h('small', {}, tokensText(record))),
        `${count(record.duration_ms)} ms`,
      ]),
      [6, 7],
    ),
  )
  show(
    more,
    page.next_cursor
      ? h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: async () => showRequests(list, more, names, selection, await requestsPage(selection, page.next_cursor ?? undefined), true),
          },
          'Older requests',
        )
      : null,
  )
}
