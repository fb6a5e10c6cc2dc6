import { type Account, type ApiKey, amountText, get, jsonBody, type Page, QUOTA_PERIODS, query, send } from './api'
import { type Child, field, h, input, notice, select, show, table } from './dom'
import { credits } from './format'
import { keyFields } from './key-form'
import { accountCell, copyButton, forgetNames, loadNames, type Names } from './names'

/** Keys (of one account with `?account_id=`), the create form and, for one key, the editor. */
export async function keysPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const accountId = params.get('account_id') ?? ''
  const [accounts, names] = await Promise.all([get<Page<Account>>('/admin/v1/accounts?limit=1000'), loadNames()])
  const secret = h('div', { 'aria-live': 'polite' })
  const list = h('div', {})
  const more = h('div', {})
  const editor = h('div', {})
  const filter = select('filter-account', [['', 'Every account'], ...accounts.data.map((account): [string, string] => [account.id, account.name])], accountId)
  filter.addEventListener('change', () => {
    location.hash = filter.value ? `#/keys?account_id=${encodeURIComponent(filter.value)}` : '#/keys'
  })
  const refresh = () => {
    forgetNames()
    show(list)
    void loadKeys(list, more, editor, names, accountId, refresh)
  }
  show(
    main,
    h('h1', {}, 'Keys'),
    secret,
    createForm(accounts.data, accountId, secret, refresh),
    editor,
    h('div', { class: 'card inline' }, field('Show keys of', filter)),
    list,
    more,
  )
  await loadKeys(list, more, editor, names, accountId, refresh)
}

/** `created` runs once a key exists, so the list shows it while its secret stays on screen; the form is emptied. */
function createForm(accounts: Account[], accountId: string, secret: HTMLElement, created: () => void): HTMLElement {
  const fields = keyFields('key', undefined, { list: accounts, selected: accountId })
  const form: HTMLFormElement = h(
    'form',
    {
      class: 'card',
      'aria-label': 'New key',
      onsubmit: async (event) => {
        event.preventDefault()
        try {
          const key = await send<ApiKey>('POST', '/admin/v1/keys', jsonBody(fields.body()))
          const account = fields.first.value
          form.reset()
          fields.first.value = account
          created()
          const copy = h('button', { type: 'button', class: 'secondary', onclick: () => void navigator.clipboard?.writeText(key.key ?? '') }, 'Copy')
          show(
            secret,
            h(
              'section',
              { class: 'card secret', role: 'status' },
              h('h2', {}, 'Key created: copy the secret now'),
              h('p', {}, 'This is the only time the gateway shows it; it keeps only a hash.'),
              h('p', { class: 'secret-row' }, h('code', { 'data-testid': 'key-secret' }, key.key ?? ''), copy),
              h('p', {}, key.name ? `${key.name}: ` : '', 'id ', h('code', {}, key.id)),
            ),
          )
          copy.focus()
        } catch (error) {
          show(secret, notice(String(error instanceof Error ? error.message : error)))
        }
      },
    },
    h('h2', {}, 'New key'),
    fields.elements,
    h('button', { type: 'submit' }, 'Create key'),
  )
  return form
}

async function loadKeys(
  list: HTMLElement,
  more: HTMLElement,
  editor: HTMLElement,
  names: Names,
  accountId: string,
  refresh: () => void,
  cursor?: string,
): Promise<void> {
  const page = await get<Page<ApiKey>>(`/admin/v1/keys${query({ account_id: accountId, limit: 100, cursor })}`)
  // With one account's keys shown, its name is not repeated on every row.
  const columns: { header: string; cell: (key: ApiKey) => Child; numeric?: boolean }[] = [
    {
      header: 'Key',
      cell: (key) =>
        h(
          'span',
          { class: 'stack wrap narrow' },
          h('strong', { title: key.id }, key.name ?? '(no name)'),
          h('span', {}, key.env, ' ', h('code', {}, `…${key.hint}`), copyButton(key.id)),
        ),
    },
    ...(accountId ? [] : [{ header: 'Account', cell: (key: ApiKey) => accountCell(names, key.account_id) }]),
    {
      header: 'Scopes, models',
      cell: (key) =>
        h('span', { class: 'stack wrap narrow' }, key.scopes?.join(', ') ?? 'every scope', h('small', {}, key.allowed_models?.join(', ') ?? 'every model')),
    },
    { header: 'Quotas', cell: quotasCell },
    { header: 'Allotment', cell: allotmentCell, numeric: true },
    { header: 'RPM / TPM', cell: (key) => `${key.rpm ?? '—'} / ${key.tpm ?? '—'}`, numeric: true },
    {
      header: 'State',
      cell: (key) =>
        key.revoked_at
          ? h('span', { class: 'stack' }, 'revoked', h('small', {}, key.revoked_at.slice(0, 10)))
          : key.expires_at
            ? h('span', { class: 'stack' }, 'expires', h('small', {}, key.expires_at.slice(0, 10)))
            : 'active',
    },
    { header: '', cell: (key) => keyActions(editor, key, refresh) },
  ]
  list.append(
    table(
      cursor ? 'More keys' : 'Keys, newest first',
      columns.map((column) => column.header),
      page.data.map((key) => columns.map((column) => column.cell(key))),
      columns.flatMap((column, index) => (column.numeric ? [index] : [])),
    ),
  )
  show(
    more,
    page.next_cursor
      ? h(
          'button',
          { type: 'button', class: 'secondary', onclick: () => loadKeys(list, more, editor, names, accountId, refresh, page.next_cursor ?? undefined) },
          'More keys',
        )
      : null,
  )
}

function quotasCell(key: ApiKey): Child {
  const set = QUOTA_PERIODS.filter((period) => key.quotas?.[period] != null)
  if (set.length === 0) return '—'
  return h('span', { class: 'stack' }, ...set.map((period) => h('span', {}, `${credits(key.quotas?.[period])} / ${period}`)))
}

/** The key's own allotment (available credits) and the balance below which it raises a `balance.low` alert. */
function allotmentCell(key: ApiKey): Child {
  if (!key.allotment && key.low_balance_threshold == null) return '—'
  return h(
    'span',
    { class: 'stack' },
    key.allotment ? credits(key.allotment.available) : 'none',
    key.low_balance_threshold == null
      ? null
      : h('small', { 'data-testid': 'key-low-balance-threshold', class: 'wrap' }, `alert below ${credits(key.low_balance_threshold)}`),
  )
}

/**
 * Only the fields the operator changed are sent; an emptied field is cleared (null). Once saved,
 * the list is read again and the editor shows the key as it now is, with `saved` said.
 */
function editKey(editor: HTMLElement, key: ApiKey, refresh: () => void, saved = false): void {
  const fields = keyFields('edit', key)
  const topUp = input('edit-top-up', { inputmode: 'decimal' })
  // One idempotency key per form: a submit repeated after a lost answer credits once.
  const topUpKey = crypto.randomUUID()
  const status = h('div', { 'aria-live': 'polite' })
  show(
    editor,
    h(
      'form',
      {
        class: 'card selected',
        'aria-label': `Edit ${key.id}`,
        onsubmit: async (event) => {
          event.preventDefault()
          try {
            const body = jsonBody(fields.body())
            const amount = topUp.value.trim() ? amountText(topUp.value, false) : undefined
            if (body === '{}' && !amount) throw new Error('Nothing changed.')
            if (body !== '{}') await send<ApiKey>('PATCH', `/admin/v1/keys/${encodeURIComponent(key.id)}`, body)
            if (amount)
              await send('POST', `/admin/v1/keys/${encodeURIComponent(key.id)}/allotment`, jsonBody({ amount, idempotency_key: `console-${topUpKey}` }))
            refresh()
            editKey(editor, await get<ApiKey>(`/admin/v1/keys/${encodeURIComponent(key.id)}`), refresh, true)
          } catch (error) {
            show(status, notice(String(error instanceof Error ? error.message : error)))
          }
        },
      },
      h('h2', {}, 'Edit ', key.name ? `${key.name} ` : '', h('code', {}, key.id)),
      fields.elements,
      h('div', { class: 'grid' }, field('Add to allotment (credits)', topUp, `Now ${key.allotment ? credits(key.allotment.available) : 'none'} available.`)),
      status,
      h('button', { type: 'submit' }, 'Save key'),
      h('button', { type: 'button', class: 'secondary', onclick: () => show(editor) }, 'Cancel'),
    ),
  )
  if (saved) show(status, notice('Saved.', 'ok'))
  fields.name.focus()
}

function keyActions(editor: HTMLElement, key: ApiKey, refresh: () => void): HTMLElement {
  return h(
    'span',
    { class: 'actions' },
    h('button', { type: 'button', class: 'secondary', 'aria-label': `Edit ${key.id}`, onclick: () => editKey(editor, key, refresh) }, 'Edit'),
    key.revoked_at
      ? null
      : h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'aria-label': `Revoke ${key.id}`,
            onclick: async () => {
              if (!confirm(`Revoke ${key.name ?? key.id}? Calls with it fail from now on.`)) return
              await send('POST', `/admin/v1/keys/${encodeURIComponent(key.id)}/revoke`)
              forgetNames()
              dispatchEvent(new HashChangeEvent('hashchange'))
            },
          },
          'Revoke',
        ),
  )
}
