import type { LedgerEntry } from './api'
import { h, table } from './dom'
import { count, credits, time } from './format'
import { accountCell, keyLabel, type Names, named } from './names'

/** Ledger entries as a table; each request id leads to its request's page. */
export function ledgerTable(caption: string, entries: readonly LedgerEntry[], names: Names): HTMLElement {
  return table(
    caption,
    ['Time', 'Kind', 'Credits', 'Uncollected', 'Model', 'Tokens in / out', 'Request', 'Account and key', 'Note'],
    entries.map((entry) => [
      time(entry.created_at),
      entry.kind,
      credits(entry.amount),
      credits(entry.uncollected),
      entry.model ?? '—',
      entry.usage ? `${count(entry.usage.input_tokens ?? 0)} / ${count(entry.usage.output_tokens ?? 0)}` : '—',
      entry.request_id
        ? h(
            'a',
            { href: `#/request?id=${encodeURIComponent(entry.request_id)}`, title: 'The request: its attempts, entries and cost' },
            h('code', {}, entry.request_id),
          )
        : '—',
      h(
        'span',
        { class: 'stack' },
        accountCell(names, entry.account_id),
        entry.key_id ? h('small', {}, named(keyLabel(names, entry.key_id), entry.key_id, `#/ledger?key_id=${encodeURIComponent(entry.key_id)}`)) : null,
      ),
      entry.note ?? '',
    ]),
    [2, 3],
  )
}
