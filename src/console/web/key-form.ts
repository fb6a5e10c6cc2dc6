import { type Account, type ApiKey, amountText, type JsonField, QUOTA_PERIODS, type QuotaPeriod } from './api'
import { field, h, input, select } from './dom'
import { credits } from './format'

export const SCOPES = 'chat, responses, embeddings, images, videos, messages, audio, wallet, pricing'

/** Comma-separated text as a list; empty is no list (null: every scope or model). */
function listOf(text: string): string[] | null {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  return items.length ? items : null
}

function integerOf(text: string, name: string): number | null {
  const trimmed = text.trim()
  if (!trimmed) return null
  if (!/^\d{1,9}$/.test(trimmed) || Number(trimmed) < 1) throw new Error(`${name} must be a whole number from 1.`)
  return Number(trimmed)
}

function amountOf(text: string) {
  return text.trim() ? amountText(text, false) : null
}

/** `2026-12-31T23:59` (a datetime-local field, read as UTC) as the API's ISO-8601; empty: none. */
function expiryOf(text: string): string | null {
  const trimmed = text.trim()
  if (!trimmed) return null
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(trimmed)) throw new Error('Expires at must be a date and time.')
  return `${trimmed}:00Z`
}

const PERIOD_NAMES: Record<QuotaPeriod, string> = {
  day: 'Quota per day (credits, UTC day)',
  week: 'Quota per week (credits, ISO week)',
  month: 'Quota per month (credits)',
}

/**
 * The fields of a key, for creating one (empty) or editing one (its values): name, scopes,
 * models, expiry, rate limits, spend limits by period and the allotment's alert threshold. On
 * create also the account, environment and a first allotment.
 */
export function keyFields(prefix: string, key?: ApiKey, accounts?: { list: Account[]; selected: string }) {
  const value = (text: string | null | undefined) => ({ value: text ?? '' })
  const amount = (credit: string | number | null | undefined) => (credit === null || credit === undefined ? '' : credits(credit))
  const inputs = {
    account: accounts
      ? select(
          `${prefix}-account`,
          accounts.list.map((item): [string, string] => [item.id, item.name]),
          accounts.selected || accounts.list[0]?.id || '',
        )
      : undefined,
    env: accounts ? select(`${prefix}-env`, ['prod', 'dev']) : undefined,
    name: input(`${prefix}-name`, { maxlength: 200, ...value(key?.name) }),
    scopes: input(`${prefix}-scopes`, { placeholder: 'every scope', ...value(key?.scopes?.join(', ')) }),
    models: input(`${prefix}-models`, { placeholder: 'every model', ...value(key?.allowed_models?.join(', ')) }),
    expires: input(`${prefix}-expires`, { type: 'datetime-local', ...value(key?.expires_at?.slice(0, 16)) }),
    rpm: input(`${prefix}-rpm`, { inputmode: 'numeric', ...value(key?.rpm?.toString()) }),
    tpm: input(`${prefix}-tpm`, { inputmode: 'numeric', ...value(key?.tpm?.toString()) }),
    day: input(`${prefix}-quota-day`, { inputmode: 'decimal', ...value(amount(key?.quotas?.day)) }),
    week: input(`${prefix}-quota-week`, { inputmode: 'decimal', ...value(amount(key?.quotas?.week)) }),
    month: input(`${prefix}-quota-month`, { inputmode: 'decimal', ...value(amount(key?.quotas?.month ?? key?.monthly_quota)) }),
    allotment: accounts ? input(`${prefix}-allotment`, { inputmode: 'decimal' }) : undefined,
    threshold: input(`${prefix}-threshold`, { inputmode: 'decimal', ...value(amount(key?.low_balance_threshold)) }),
  }
  const initial = Object.fromEntries(Object.entries(inputs).map(([name, element]) => [name, element?.value ?? '']))
  const elements = h(
    'div',
    { class: 'grid' },
    inputs.account ? field('Account', inputs.account) : null,
    inputs.env ? field('Environment', inputs.env) : null,
    field('Name', inputs.name),
    field('Scopes', inputs.scopes, SCOPES),
    field('Allowed models', inputs.models, 'Ids or vendor/* patterns, comma-separated.'),
    field('Expires at (UTC)', inputs.expires, 'Empty: never.'),
    field('Requests per minute', inputs.rpm),
    field('Tokens per minute', inputs.tpm),
    ...QUOTA_PERIODS.map((period) => field(PERIOD_NAMES[period], inputs[period], 'Empty: no limit.')),
    inputs.allotment ? field('Allotment (credits)', inputs.allotment, 'Credits only this key spends; empty: it spends its account’s wallet.') : null,
    field('Low-balance alert below (credits)', inputs.threshold, 'Of the key’s allotment; empty: no alert.'),
  )
  /** The body to send: on create every filled field; on edit only the changed ones, an emptied one cleared (null). */
  const body = (): Record<string, JsonField> => {
    const changed = (name: keyof typeof inputs) => key === undefined || (inputs[name]?.value ?? '').trim() !== (initial[name] ?? '').trim()
    const pick = <T>(name: keyof typeof inputs, read: () => T | null): T | null | undefined => {
      if (!changed(name)) return undefined
      const result = read()
      return key === undefined && result === null ? undefined : result
    }
    const quotas: Record<string, JsonField> = {}
    for (const period of QUOTA_PERIODS) quotas[period] = pick(period, () => amountOf(inputs[period].value))
    const anyQuota = QUOTA_PERIODS.some((period) => quotas[period] !== undefined)
    return {
      account_id: inputs.account?.value,
      env: inputs.env?.value,
      name: pick('name', () => inputs.name.value.trim() || null),
      scopes: pick('scopes', () => listOf(inputs.scopes.value)),
      allowed_models: pick('models', () => listOf(inputs.models.value)),
      expires_at: pick('expires', () => expiryOf(inputs.expires.value)),
      rpm: pick('rpm', () => integerOf(inputs.rpm.value, 'Requests per minute')),
      tpm: pick('tpm', () => integerOf(inputs.tpm.value, 'Tokens per minute')),
      quotas: anyQuota ? quotas : undefined,
      allotment: inputs.allotment?.value.trim() ? amountText(inputs.allotment.value, false) : undefined,
      low_balance_threshold: pick('threshold', () => amountOf(inputs.threshold.value)),
    }
  }
  return { elements, body, first: inputs.account ?? inputs.name, name: inputs.name }
}
