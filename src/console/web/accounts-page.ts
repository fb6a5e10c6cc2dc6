import { type Account, amountText, type Credits, get, jsonBody, type Page, query, send, type User, type Wallet } from './api'
import { field, h, input, notice, show, table } from './dom'
import { credits, time } from './format'
import { copyButton, named } from './names'

/** Accounts, newest first, a page at a time; the selected one (`?id=`) with its wallet forms. */
export async function accountsPage(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const list = h('div', {})
  const more = h('div', {})
  const detail = h('div', {})
  const name = input('account-name', { required: true, maxlength: 200 })
  const created = h('div', {})
  show(
    main,
    h('h1', {}, 'Accounts'),
    detail,
    h(
      'form',
      {
        class: 'card inline',
        onsubmit: async (event) => {
          event.preventDefault()
          try {
            const account = await send<Account>('POST', '/admin/v1/accounts', jsonBody({ name: name.value.trim() }))
            location.hash = `#/accounts?id=${encodeURIComponent(account.id)}`
          } catch (error) {
            show(created, notice(String(error instanceof Error ? error.message : error)))
          }
        },
      },
      h('h2', {}, 'New account'),
      field('Name', name),
      h('button', { type: 'submit' }, 'Create account'),
      created,
    ),
    list,
    more,
  )
  const selected = params.get('id')
  if (selected) await accountDetail(detail, selected)
  await loadAccounts(list, more)
  const users = h('div', {})
  const moreUsers = h('div', {})
  main.append(users, moreUsers)
  await loadUsers(users, moreUsers)
}

/** Users signed in through an identity provider, with their allotments (credited with the CLI or API). */
async function loadUsers(list: HTMLElement, more: HTMLElement, cursor?: string): Promise<void> {
  const page = await get<Page<User>>(`/admin/v1/users${query({ limit: 100, cursor })}`)
  const rows = page.data.map((user) => [
    user.iss,
    h('code', {}, user.sub),
    credits(user.allotment?.balance),
    credits(user.allotment?.held),
    credits(user.allotment?.available),
  ])
  list.append(table(cursor ? 'More users' : 'Users, newest first', ['Issuer', 'Subject', 'Balance', 'Held', 'Available'], rows, [2, 3, 4]))
  show(
    more,
    page.next_cursor
      ? h('button', { type: 'button', class: 'secondary', onclick: () => loadUsers(list, more, page.next_cursor ?? undefined) }, 'More users')
      : null,
  )
}

async function loadAccounts(list: HTMLElement, more: HTMLElement, cursor?: string): Promise<void> {
  const page = await get<Page<Account>>(`/admin/v1/accounts${query({ limit: 100, cursor })}`)
  const rows = page.data.map((account) => [
    named(account.name, account.id, `#/accounts?id=${encodeURIComponent(account.id)}`),
    credits(account.wallet.balance),
    credits(account.wallet.held),
    credits(account.wallet.available),
    time(account.created_at),
  ])
  list.append(table(cursor ? 'More accounts' : 'Accounts, newest first', ['Name', 'Balance', 'Held', 'Available', 'Created'], rows, [1, 2, 3]))
  show(
    more,
    page.next_cursor
      ? h('button', { type: 'button', class: 'secondary', onclick: () => loadAccounts(list, more, page.next_cursor ?? undefined) }, 'More accounts')
      : null,
  )
}

/** The wallet, and the balance below which it raises a `balance.low` alert (set with the admin API). */
function walletView(wallet: Wallet, lowBalanceThreshold: Credits | null | undefined): HTMLElement {
  return h(
    'dl',
    { class: 'wallet' },
    h('div', {}, h('dt', {}, 'Balance'), h('dd', { 'data-testid': 'wallet-balance' }, credits(wallet.balance))),
    h('div', {}, h('dt', {}, 'Held'), h('dd', {}, credits(wallet.held))),
    h('div', {}, h('dt', {}, 'Available'), h('dd', { 'data-testid': 'wallet-available' }, credits(wallet.available))),
    h(
      'div',
      {},
      h('dt', {}, 'Low-balance alert below'),
      h(
        'dd',
        { 'data-testid': 'wallet-low-balance-threshold', class: lowBalanceThreshold == null ? 'unset' : undefined },
        lowBalanceThreshold == null ? 'none' : credits(lowBalanceThreshold),
      ),
    ),
  )
}

async function accountDetail(detail: HTMLElement, id: string): Promise<void> {
  const account = await get<Account>(`/admin/v1/accounts/${encodeURIComponent(id)}`)
  const wallet = h('div', {}, walletView(account.wallet, account.low_balance_threshold))
  const status = h('div', { 'aria-live': 'polite' })
  const credit = (kind: 'top-up' | 'adjustment') => {
    const amount = input(`${kind}-amount`, { required: true, inputmode: 'decimal', autocomplete: 'off' })
    const idempotency = input(`${kind}-idempotency`, { value: crypto.randomUUID(), required: kind === 'top-up', maxlength: 200 })
    const note = input(`${kind}-note`, { maxlength: 500, required: kind === 'adjustment' })
    return h(
      'form',
      {
        class: 'card',
        onsubmit: async (event) => {
          event.preventDefault()
          try {
            const body = jsonBody({
              amount: amountText(amount.value, kind === 'adjustment'),
              idempotency_key: idempotency.value.trim() || undefined,
              note: note.value.trim() || undefined,
            })
            const answer = await send<{ wallet: Wallet }>('POST', `/admin/v1/accounts/${encodeURIComponent(id)}/credits`, body)
            show(wallet, walletView(answer.wallet, account.low_balance_threshold))
            show(status, notice(`${kind === 'top-up' ? 'Topped up' : 'Adjusted'} by ${amount.value.trim()} credits.`, 'ok'))
            amount.value = ''
            idempotency.value = crypto.randomUUID()
          } catch (error) {
            show(status, notice(String(error instanceof Error ? error.message : error)))
          }
        },
      },
      h('h3', {}, kind === 'top-up' ? 'Top up' : 'Adjustment'),
      field('Amount (credits)', amount, kind === 'top-up' ? 'Up to six decimals.' : 'Negative to take credits away.'),
      field('Idempotency key', idempotency, 'The same key twice credits once: resubmitting is safe.'),
      field(kind === 'top-up' ? 'Note (optional)' : 'Reason', note),
      h('button', { type: 'submit' }, kind === 'top-up' ? 'Top up' : 'Apply adjustment'),
    )
  }
  show(
    detail,
    h(
      'section',
      { class: 'card selected', 'aria-label': `Account ${account.name}` },
      h('h2', {}, account.name, ' ', h('code', {}, account.id), copyButton(account.id)),
      wallet,
      h(
        'p',
        { class: 'links' },
        h('a', { href: `#/keys?account_id=${encodeURIComponent(account.id)}` }, 'Keys'),
        h('a', { href: `#/usage?account_id=${encodeURIComponent(account.id)}` }, 'Usage'),
        h('a', { href: `#/ledger?account_id=${encodeURIComponent(account.id)}` }, 'Ledger'),
        h('a', { href: `#/activity?account_id=${encodeURIComponent(account.id)}` }, 'Activity'),
      ),
      status,
      h('div', { class: 'columns' }, credit('top-up'), credit('adjustment')),
    ),
  )
}
