import { modelCell, statusBadge } from './activity-page'
import { ApiError, get, type LedgerEntry, type Page, query, type RequestDetail } from './api'
import { h, notice, show, table } from './dom'
import { count, credits, time } from './format'
import { ledgerTable } from './ledger-table'
import { accountCell, keyCell, loadNames, named } from './names'

/** One request (`#/request?id=…`): what it asked and got, each upstream attempt, and its ledger entries with the cost. */
export async function requestPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const id = params.get('id') ?? ''
  if (!id) {
    show(
      main,
      h('h1', {}, 'Request'),
      h('p', {}, 'Open a request from ', h('a', { href: '#/activity' }, 'Activity'), ' or the ', h('a', { href: '#/ledger' }, 'Ledger'), '.'),
    )
    return
  }
  const [record, names] = await Promise.all([recordOf(id), loadNames()])
  if (!record) {
    // Kept for TOLLGATE_ACTIVITY_RETENTION_DAYS only, while the ledger keeps its entries for good.
    const ledger = await get<Page<LedgerEntry>>(`/admin/v1/ledger${query({ request_id: id, limit: 1000 })}`)
    show(
      main,
      h('h1', {}, 'Request ', h('code', {}, id)),
      notice('The gateway has no activity record of this request (older than its retention, or never recorded); its ledger entries follow.', 'ok'),
      ledgerTable('Ledger entries of this request', ledger.data, names),
    )
    return
  }
  const fact = (term: string, value: Parameters<typeof h>[2]) => [h('dt', {}, term), h('dd', {}, value)]
  show(
    main,
    h('h1', {}, 'Request ', h('code', {}, record.request_id)),
    h(
      'section',
      { class: 'card', 'aria-label': 'Request' },
      h(
        'dl',
        { class: 'facts' },
        ...fact('Time', time(record.created_at)),
        ...fact('Status', h('span', {}, statusBadge(record.status), record.error_code ? ` ${record.error_code}` : '')),
        ...fact('Route', h('code', {}, `${record.method} ${record.route}`)),
        ...fact('Model', modelCell(record)),
        ...fact('Key', record.key_id ? keyCell(names, record.key_id) : '—'),
        ...fact('Account', accountCell(names, record.account_id)),
        ...fact('User', record.user_sub ?? '—'),
        ...fact(
          'Session',
          record.session_id ? named(record.session_id, record.session_id, `#/activity?session_id=${encodeURIComponent(record.session_id)}`) : '—',
        ),
        ...fact(
          'Tokens',
          record.tokens
            ? `${count(record.tokens.input)} in, ${count(record.tokens.output)} out, ${count(record.tokens.cache_read)} cache read, ${count(record.tokens.cache_write)} cache write`
            : '—',
        ),
        ...fact('Cost', h('span', { 'data-testid': 'request-cost' }, credits(record.cost), ' credits')),
        ...fact('Duration', `${count(record.duration_ms)} ms`),
      ),
    ),
    table(
      'Upstream attempts, in order',
      ['#', 'Provider', 'Answer', 'Duration'],
      record.attempts.map((attempt, index) => [
        String(index + 1),
        attempt.provider,
        attempt.status !== undefined ? statusBadge(attempt.status) : (attempt.reason ?? '—'),
        `${count(attempt.duration_ms)} ms`,
      ]),
      [3],
    ),
    ledgerTable('Ledger entries of this request', record.ledger, names),
  )
}

/** The request's record, or null when the gateway has none (404). */
async function recordOf(id: string): Promise<RequestDetail | null> {
  try {
    return await get<RequestDetail>(`/admin/v1/requests/${encodeURIComponent(id)}`)
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null
    throw error
  }
}
