import { type Account, type ApiKey, type Credits, get, QUOTA_PERIODS } from './api'
import { h } from './dom'
import { credits } from './format'
import { accountCell, keyCell, type Names } from './names'
import { micros } from './periods'

/** Keys whose spend is read one by one (GET /admin/v1/keys/{id}: `spent`): those with a limit, at most this many. */
const MOST_KEYS = 24

/**
 * A bar from 0 to `max` filled to `value`, as the page's only measure of how full a budget is:
 * `tone` colours it (ok, warn, over). The width is set through the CSS object model, which the
 * console's Content-Security-Policy allows (a style attribute it would refuse).
 */
export function progressBar(label: string, value: bigint, max: bigint, tone: 'ok' | 'warn' | 'over', text: string, marker?: bigint): HTMLElement {
  const share = max > 0n ? Math.min(1, Number((value * 10_000n) / max) / 10_000) : 0
  const fill = h('span', { class: `fill ${tone}` })
  fill.style.width = `${(share * 100).toFixed(1)}%`
  const track = h('span', {
    class: 'track',
    role: 'progressbar',
    'aria-label': label,
    'aria-valuemin': 0,
    'aria-valuemax': 100,
    'aria-valuenow': Math.round(share * 100),
    'aria-valuetext': text,
  })
  track.append(fill)
  if (marker !== undefined && max > 0n) {
    const tick = h('span', { class: 'marker', title: 'alert threshold' })
    tick.style.left = `${Math.min(100, Number((marker * 10_000n) / max) / 100).toFixed(1)}%`
    track.append(tick)
  }
  return h('span', { class: 'progress' }, track, h('small', {}, text))
}

/**
 * A wallet against its low-balance threshold: the bar is the available credit on a scale of twice
 * the threshold (full at or above it), with the threshold marked; red below it, amber below
 * twice it. Without a threshold, the amounts alone.
 */
function walletBar(label: string, available: Credits, threshold: Credits | null | undefined): HTMLElement {
  if (threshold === null || threshold === undefined) return h('small', { class: 'muted' }, `${credits(available)} available, no alert threshold`)
  const have = micros(available)
  const limit = micros(threshold)
  const scale = limit * 2n > have ? limit * 2n : have
  const tone = have < limit ? 'over' : have < limit * 2n ? 'warn' : 'ok'
  return progressBar(label, have, scale, tone, `${credits(available)} available · alert below ${credits(threshold)}`, limit)
}

/** Wallets of accounts and key allotments, those with an alert threshold first, lowest available first. */
export function walletsCard(names: Names): HTMLElement {
  const accounts = [...names.accounts.values()]
  const allotted = [...names.keys.values()].filter((key) => key.allotment && !key.revoked_at)
  type Row = { cell: ReturnType<typeof accountCell>; bar: HTMLElement; threshold: boolean; available: bigint }
  const rows: Row[] = [
    ...accounts.map((account: Account) => ({
      cell: accountCell(names, account.id),
      bar: walletBar(`Wallet of ${account.name}`, account.wallet.available, account.low_balance_threshold),
      threshold: account.low_balance_threshold != null,
      available: micros(account.wallet.available),
    })),
    ...allotted.map((key: ApiKey) => ({
      cell: keyCell(names, key.id),
      bar: walletBar(`Allotment of ${key.name ?? key.id}`, key.allotment?.available ?? '0', key.low_balance_threshold),
      threshold: key.low_balance_threshold != null,
      available: micros(key.allotment?.available),
    })),
  ].sort((a, b) => Number(b.threshold) - Number(a.threshold) || (a.available < b.available ? -1 : a.available > b.available ? 1 : 0))
  return h(
    'section',
    { class: 'card budgets', 'aria-label': 'Wallets' },
    h('h2', {}, 'Wallets and allotments'),
    rows.length === 0
      ? h('p', { class: 'empty' }, 'No account yet.')
      : h('ul', { class: 'bars' }, ...rows.slice(0, 12).map((row) => h('li', {}, h('span', { class: 'who' }, row.cell), row.bar))),
    rows.length > 12 ? h('p', {}, h('a', { href: '#/accounts' }, `Every account (${accounts.length})`)) : null,
  )
}

/** Each key's spend in the current day, week and month against its limits; red at the limit, amber from 80 percent. */
export async function quotasCard(names: Names): Promise<HTMLElement> {
  const limited = [...names.keys.values()].filter((key) => !key.revoked_at && key.quotas && QUOTA_PERIODS.some((period) => key.quotas?.[period] != null))
  const keys = await Promise.all(limited.slice(0, MOST_KEYS).map((key) => get<ApiKey>(`/admin/v1/keys/${encodeURIComponent(key.id)}`)))
  const items = keys.flatMap((key) =>
    QUOTA_PERIODS.flatMap((period) => {
      const limit = key.quotas?.[period]
      if (limit === null || limit === undefined) return []
      const spent = micros(key.spent?.[period])
      const max = micros(limit)
      const tone = spent >= max ? 'over' : spent * 10n >= max * 8n ? 'warn' : 'ok'
      const percent = max > 0n ? Number((spent * 1000n) / max) / 10 : 100
      return [
        h(
          'li',
          { 'data-testid': `quota-${key.id}-${period}` },
          h('span', { class: 'who' }, keyCell(names, key.id), h('small', {}, ` this ${period}`)),
          progressBar(
            `${key.name ?? key.id}: spend this ${period}`,
            spent,
            max,
            tone,
            `${credits(key.spent?.[period] ?? '0')} of ${credits(limit)} (${percent}%)`,
          ),
        ),
      ]
    }),
  )
  return h(
    'section',
    { class: 'card budgets', 'aria-label': 'Quotas' },
    h('h2', {}, 'Key quotas, current periods (UTC)'),
    items.length === 0 ? h('p', { class: 'empty' }, 'No key has a spend limit.') : h('ul', { class: 'bars' }, ...items),
    limited.length > MOST_KEYS ? h('p', { class: 'muted' }, `The first ${MOST_KEYS} of ${limited.length} keys with limits.`) : null,
  )
}
