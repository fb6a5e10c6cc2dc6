import { type Account, type ApiKey, get, type Page } from './api'
import { type Child, h } from './dom'

/**
 * Names for the ids the admin API answers with (`acct_…`, `key_…`): the first 1000 accounts and
 * keys, read once per page drawn. An id shows as its name, the id on hover and one click away
 * (copied); an id the directory does not know (beyond those 1000, or deleted) shows as itself.
 */
export interface Names {
  accounts: Map<string, Account>
  keys: Map<string, ApiKey>
}

let loaded: { at: number; names: Promise<Names> } | undefined
/** A page drawn again within this time reuses the directory (a key created since is shown by id until then). */
const FRESH_MS = 5_000

export function loadNames(): Promise<Names> {
  if (loaded && Date.now() - loaded.at < FRESH_MS) return loaded.names
  const names = Promise.all([get<Page<Account>>('/admin/v1/accounts?limit=1000'), get<Page<ApiKey>>('/admin/v1/keys?limit=1000')]).then(([accounts, keys]) => ({
    accounts: new Map(accounts.data.map((account) => [account.id, account])),
    keys: new Map(keys.data.map((key) => [key.id, key])),
  }))
  loaded = { at: Date.now(), names }
  names.catch(() => {
    loaded = undefined
  })
  return names
}

/** Forgets the directory: the next page reads names afresh (after a create or a rename). */
export function forgetNames(): void {
  loaded = undefined
}

export function accountLabel(names: Names, id: string | null | undefined): string {
  if (!id) return '—'
  return names.accounts.get(id)?.name ?? id
}

export function keyLabel(names: Names, id: string | null | undefined): string {
  if (!id) return '—'
  const key = names.keys.get(id)
  if (!key) return id
  return key.name ?? `…${key.hint}`
}

/**
 * A name with its id on hover, linking to `href` when given, and a button that copies the id
 * (its label says which id, for screen readers and tests).
 */
export function named(label: string, id: string | null | undefined, href?: string): Child {
  if (!id) return '—'
  const text = href ? h('a', { href, title: id, class: 'name' }, label) : h('span', { title: id, class: 'name' }, label)
  return h('span', { class: 'named' }, text, copyButton(id))
}

export function copyButton(id: string): HTMLElement {
  const button = h(
    'button',
    {
      type: 'button',
      class: 'copy',
      title: `Copy ${id}`,
      'aria-label': `Copy ${id}`,
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(id)
          button.replaceChildren('✓')
        } catch {
          // No clipboard (a page not served over https or localhost): the id is selected instead.
          const range = document.createRange()
          range.selectNodeContents(button.previousSibling ?? button)
          getSelection()?.removeAllRanges()
          getSelection()?.addRange(range)
        }
        setTimeout(() => button.replaceChildren(copyIcon()), 1500)
      },
    },
    copyIcon(),
  )
  return button
}

/** Two overlapping sheets, drawn: no icon font is loaded, and not every system font has a glyph for it. */
function copyIcon(): SVGSVGElement {
  const SVG = 'http://www.w3.org/2000/svg'
  const icon = document.createElementNS(SVG, 'svg')
  icon.setAttribute('viewBox', '0 0 16 16')
  icon.setAttribute('aria-hidden', 'true')
  for (const [x, y] of [
    [1, 1],
    [5, 5],
  ] as const) {
    const sheet = document.createElementNS(SVG, 'rect')
    for (const [name, value] of Object.entries({
      x,
      y,
      width: 10,
      height: 10,
      rx: 1.5,
      fill: x === 5 ? 'currentColor' : 'none',
      stroke: 'currentColor',
      'stroke-width': 1.5,
    }))
      sheet.setAttribute(name, String(value))
    icon.append(sheet)
  }
  return icon
}

export function accountCell(names: Names, id: string | null | undefined): Child {
  return named(accountLabel(names, id), id, id ? `#/accounts?id=${encodeURIComponent(id)}` : undefined)
}

export function keyCell(names: Names, id: string | null | undefined): Child {
  return named(keyLabel(names, id), id, id ? `#/ledger?key_id=${encodeURIComponent(id)}` : undefined)
}

/** Choices of every known account or key by name (values are ids), sorted by name, after an "every" choice. */
export function nameChoices(names: Names, kind: 'account' | 'key'): [string, string][] {
  const entries =
    kind === 'account'
      ? [...names.accounts.values()].map((account): [string, string] => [account.id, account.name])
      : [...names.keys.values()].map((key): [string, string] => [key.id, key.name ?? `…${key.hint}`])
  return [['', kind === 'account' ? 'Every account' : 'Every key'], ...entries.sort((a, b) => a[1].localeCompare(b[1]))]
}
