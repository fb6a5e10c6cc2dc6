import { accountsPage } from './accounts-page'
import { activityPage } from './activity-page'
import { session } from './api'
import { h, show } from './dom'
import { healthPage } from './health-page'
import { keysPage } from './keys-page'
import { ledgerPage } from './ledger-page'
import { modelsPage } from './models-page'
import { overviewPage } from './overview-page'
import { requestPage } from './request-page'
import { signInPage } from './sign-in-page'
import { usagePage } from './usage-page'
import { webhooksPage } from './webhooks-page'

/** Each view draws itself into `main` from the hash route's query (`#/ledger?request_id=…`). */
export type View = (main: HTMLElement, params: URLSearchParams) => Promise<void> | void

/** `hidden` views are reached by links (a request from Activity or the Ledger), not the navigation. */
const VIEWS: readonly { path: string; title: string; view: View; hidden?: boolean }[] = [
  { path: 'overview', title: 'Overview', view: overviewPage },
  { path: 'accounts', title: 'Accounts', view: accountsPage },
  { path: 'keys', title: 'Keys', view: keysPage },
  { path: 'activity', title: 'Activity', view: activityPage },
  { path: 'usage', title: 'Usage', view: usagePage },
  { path: 'ledger', title: 'Ledger', view: ledgerPage },
  { path: 'webhooks', title: 'Webhooks', view: webhooksPage },
  { path: 'models', title: 'Models', view: modelsPage },
  { path: 'health', title: 'Health', view: healthPage },
  { path: 'request', title: 'Request', view: requestPage, hidden: true },
]

const root = document.getElementById('console') ?? document.body

function route(): { path: string; params: URLSearchParams } {
  const [path = '', search = ''] = location.hash.replace(/^#\/?/, '').split('?')
  return { path, params: new URLSearchParams(search) }
}

export function navigate(path: string, params: Record<string, string> = {}): void {
  const search = new URLSearchParams(params).toString()
  location.hash = `#/${path}${search ? `?${search}` : ''}`
}

async function render(): Promise<void> {
  if (!session.token()) {
    show(
      root,
      signInPage(() => render()),
    )
    return
  }
  const { path, params } = route()
  const current = VIEWS.find((view) => view.path === path) ?? VIEWS[0]
  if (!current) return
  const main = h('main', { id: 'main', tabindex: -1 })
  const signOut = h(
    'button',
    {
      type: 'button',
      class: 'link',
      onclick: () => {
        session.signOut()
        void render()
      },
    },
    'Sign out',
  )
  show(
    root,
    h(
      'a',
      {
        class: 'skip',
        href: '#main',
        onclick: (event) => {
          event.preventDefault()
          main.focus()
        },
      },
      'Skip to content',
    ),
    h(
      'header',
      { class: 'top' },
      h('span', { class: 'brand' }, 'Tollgate'),
      h(
        'nav',
        { 'aria-label': 'Console' },
        h(
          'ul',
          {},
          ...VIEWS.filter((view) => !view.hidden).map((view) =>
            h('li', {}, h('a', { href: `#/${view.path}`, 'aria-current': view === current ? 'page' : undefined }, view.title)),
          ),
        ),
      ),
      signOut,
    ),
    main,
  )
  document.title = `${current.title} · Tollgate console`
  // Outside `main`, which a view redraws as it goes: it stays until the view has finished.
  const loading = h('p', { class: 'loading', role: 'status' }, 'Loading…')
  show(main, h('h1', {}, current.title))
  root.append(loading)
  try {
    await current.view(main, params)
  } catch (error) {
    main.append(h('p', { class: 'notice error', role: 'alert' }, error instanceof Error ? error.message : String(error)))
  }
  loading.remove()
  // A re-drawn page loses the focused element: keyboard users continue from the page, not the
  // top of the document. On the first page they start from the top (skip link, navigation).
  if (!firstRender && (document.activeElement === document.body || document.activeElement === null)) main.focus()
  firstRender = false
}

let firstRender = true

window.addEventListener('hashchange', () => void render())
window.addEventListener('tollgate:signed-out', () => void render())
void render()
