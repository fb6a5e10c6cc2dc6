import { type Account, type ApiKey, amountText, get, jsonBody, type Page, query, send } from './api'
import { type Child, field, h, input, notice, select, show, table } from './dom'
import { credits } from './format'

const SCOPES = 'chat, responses, embeddings, images, videos, messages, audio, wallet, pricing'

/** Comma-separated text as a list; empty is no list (null: every scope or model). */
function listOf(text: string): string[] | null {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  return items.length ? items : null
}

function integerOf(text: string, name: string): number | null {
  if (!text.trim()) return null
  if (!/^\d+$/.test(text.trim())) throw new Error(`${name} must be a whole number.`)
  return Number(text.trim())
}

/** Keys (of one account with `?account_id=`), the create form and, for one key, its limits. */
export async function keysPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const accountId = params.get('account_id') ?? ''
  const accounts = await get<Page<Account>>('/admin/v1/accounts?limit=1000')
  const secret = h('div', { 'aria-live': 'polite' })
  const list = h('div', {})
  const more = h('div', {})
  const editor = h('div', {})
  const filter = select(
    'filter-account',
    [['', 'Every account'], ...accounts.data.map((account): [string, string] => [account.id, `${account.name} (${account.id})`])],
    accountId,
  )
  filter.addEventListener('change', () => {
    location.hash = filter.value ? `#/keys?account_id=${encodeURIComponent(filter.value)}` : '#/keys'
  })
  const refresh = () => {
    show(list)
    void loadKeys(list, more, editor, accountId)
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
  await loadKeys(list, more, editor, accountId)
}

/** `created` runs once a key exists, so the list shows it while its secret stays on screen. */
function createForm(accounts: Account[], accountId: string, secret: HTMLElement, created: () => void): HTMLElement {
  const account = select(
    'key-account',
    accounts.map((item): [string, string] => [item.id, `${item.name} (${item.id})`]),
    accountId || accounts[0]?.id || '',
  )
  const env = select('key-env', ['prod', 'dev'])
  const name = input('key-name', { maxlength: 200 })
  const scopes = input('key-scopes', { placeholder: 'every scope' })
  const models = input('key-models', { placeholder: 'every model' })
  const quota = input('key-quota', { inputmode: 'decimal' })
  const rpm = input('key-rpm', { inputmode: 'numeric' })
  const tpm = input('key-tpm', { inputmode: 'numeric' })
  return h(
    'form',
    {
      class: 'card',
      onsubmit: async (event) => {
        event.preventDefault()
        try {
          const body = jsonBody({
            account_id: account.value,
            env: env.value,
            name: name.value.trim() || undefined,
            scopes: listOf(scopes.value) ?? undefined,
            allowed_models: listOf(models.value) ?? undefined,
            monthly_quota: quota.value.trim() ? amountText(quota.value, false) : undefined,
            rpm: integerOf(rpm.value, 'rpm') ?? undefined,
            tpm: integerOf(tpm.value, 'tpm') ?? undefined,
          })
          const key = await send<ApiKey>('POST', '/admin/v1/keys', body)
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
              h('p', {}, 'Id ', h('code', {}, key.id)),
            ),
          )
          copy.focus()
        } catch (error) {
          show(secret, notice(String(error instanceof Error ? error.message : error)))
        }
      },
    },
    h('h2', {}, 'New key'),
    h(
      'div',
      { class: 'grid' },
      field('Account', account),
      field('Environment', env),
      field('Name', name),
      field('Scopes', scopes, SCOPES),
      field('Allowed models', models, 'Ids or vendor/* patterns, comma-separated.'),
      field('Monthly quota (credits)', quota),
      field('Requests per minute', rpm),
      field('Tokens per minute', tpm),
    ),
    h('button', { type: 'submit' }, 'Create key'),
  )
}

async function loadKeys(list: HTMLElement, more: HTMLElement, editor: HTMLElement, accountId: string, cursor?: string): Promise<void> {
  const page = await get<Page<ApiKey>>(`/admin/v1/keys${query({ account_id: accountId, limit: 100, cursor })}`)
  // With one account's keys shown, its id is not repeated on every row.
  const columns: { header: string; cell: (key: ApiKey) => Child; numeric?: boolean }[] = [
    { header: 'Key', cell: (key) => h('span', { class: 'stack' }, h('strong', {}, key.name ?? '(no name)'), h('code', {}, key.id)) },
    { header: 'Env, hint', cell: (key) => h('span', {}, key.env, ' ', h('code', {}, `…${key.hint}`)) },
    ...(accountId
      ? []
      : [{ header: 'Account', cell: (key: ApiKey) => h('a', { href: `#/accounts?id=${encodeURIComponent(key.account_id)}` }, key.account_id) }]),
    { header: 'Scopes', cell: (key) => key.scopes?.join(', ') ?? 'all' },
    { header: 'Models', cell: (key) => key.allowed_models?.join(', ') ?? 'all' },
    { header: 'Monthly quota', cell: (key) => credits(key.monthly_quota), numeric: true },
    { header: 'Allotment', cell: allotmentCell, numeric: true },
    { header: 'RPM', cell: (key) => key.rpm ?? '—', numeric: true },
    { header: 'TPM', cell: (key) => key.tpm ?? '—', numeric: true },
    {
      header: 'State',
      cell: (key) => (key.revoked_at ? `revoked ${key.revoked_at.slice(0, 10)}` : key.expires_at ? `expires ${key.expires_at.slice(0, 10)}` : 'active'),
    },
    { header: '', cell: (key) => keyActions(editor, key) },
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
      ? h('button', { type: 'button', class: 'secondary', onclick: () => loadKeys(list, more, editor, accountId, page.next_cursor ?? undefined) }, 'More keys')
      : null,
  )
}

/** The key's own allotment (available credits) and the balance below which it raises a `balance.low` alert. */
function allotmentCell(key: ApiKey): Child {
  if (!key.allotment && key.low_balance_threshold == null) return '—'
  return h(
    'span',
    { class: 'stack' },
    key.allotment ? credits(key.allotment.available) : 'none',
    key.low_balance_threshold == null ? null : h('small', { 'data-testid': 'key-low-balance-threshold' }, `alert below ${credits(key.low_balance_threshold)}`),
  )
}

/** Only the fields the operator changed are sent; an emptied field is cleared (null). */
function editKey(editor: HTMLElement, key: ApiKey): void {
  const initial = {
    name: key.name ?? '',
    scopes: key.scopes?.join(', ') ?? '',
    models: key.allowed_models?.join(', ') ?? '',
    quota: key.monthly_quota === null ? '' : credits(key.monthly_quota),
    rpm: key.rpm === null ? '' : String(key.rpm),
    tpm: key.tpm === null ? '' : String(key.tpm),
    expires: key.expires_at ?? '',
  }
  const name = input('edit-name', { value: initial.name, maxlength: 200 })
  const scopes = input('edit-scopes', { value: initial.scopes, placeholder: 'every scope' })
  const models = input('edit-models', { value: initial.models, placeholder: 'every model' })
  const quota = input('edit-quota', { value: initial.quota, inputmode: 'decimal' })
  const rpm = input('edit-rpm', { value: initial.rpm, inputmode: 'numeric' })
  const tpm = input('edit-tpm', { value: initial.tpm, inputmode: 'numeric' })
  const expires = input('edit-expires', { value: initial.expires, placeholder: 'YYYY-MM-DDTHH:MM:SSZ' })
  const status = h('div', { 'aria-live': 'polite' })
  const changed = (now: string, before: string) => now.trim() !== before
  show(
    editor,
    h(
      'form',
      {
        class: 'card selected',
        onsubmit: async (event) => {
          event.preventDefault()
          try {
            const body = jsonBody({
              name: changed(name.value, initial.name) ? name.value.trim() || null : undefined,
              scopes: changed(scopes.value, initial.scopes) ? listOf(scopes.value) : undefined,
              allowed_models: changed(models.value, initial.models) ? listOf(models.value) : undefined,
              monthly_quota: changed(quota.value, initial.quota) ? (quota.value.trim() ? amountText(quota.value, false) : null) : undefined,
              rpm: changed(rpm.value, initial.rpm) ? integerOf(rpm.value, 'rpm') : undefined,
              tpm: changed(tpm.value, initial.tpm) ? integerOf(tpm.value, 'tpm') : undefined,
              expires_at: changed(expires.value, initial.expires) ? expires.value.trim() || null : undefined,
            })
            if (body === '{}') throw new Error('Nothing changed.')
            await send<ApiKey>('PATCH', `/admin/v1/keys/${encodeURIComponent(key.id)}`, body)
            show(status, notice('Saved.', 'ok'))
            dispatchEvent(new HashChangeEvent('hashchange'))
          } catch (error) {
            show(status, notice(String(error instanceof Error ? error.message : error)))
          }
        },
      },
      h('h2', {}, 'Edit ', h('code', {}, key.id)),
      h(
        'div',
        { class: 'grid' },
        field('Name', name),
        field('Scopes', scopes, SCOPES),
        field('Allowed models', models),
        field('Monthly quota (credits)', quota),
        field('Requests per minute', rpm),
        field('Tokens per minute', tpm),
        field('Expires at (ISO-8601)', expires),
      ),
      status,
      h('button', { type: 'submit' }, 'Save limits'),
      h('button', { type: 'button', class: 'secondary', onclick: () => show(editor) }, 'Cancel'),
    ),
  )
  name.focus()
}

function keyActions(editor: HTMLElement, key: ApiKey): HTMLElement {
  return h(
    'span',
    { class: 'actions' },
    h('button', { type: 'button', class: 'secondary', 'aria-label': `Edit ${key.id}`, onclick: () => editKey(editor, key) }, 'Edit'),
    key.revoked_at
      ? null
      : h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'aria-label': `Revoke ${key.id}`,
            onclick: async () => {
              if (!confirm(`Revoke ${key.id}? Calls with it fail from now on.`)) return
              await send('POST', `/admin/v1/keys/${encodeURIComponent(key.id)}/revoke`)
              dispatchEvent(new HashChangeEvent('hashchange'))
            },
          },
          'Revoke',
        ),
  )
}
