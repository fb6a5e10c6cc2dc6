/**
 * The console's only way to the gateway: the admin API with the operator's token, kept in
 * sessionStorage so it lives as long as the tab (docs/operations.md#console).
 */
const TOKEN_KEY = 'tollgate.adminToken'

/** A credit amount: the JSON number's own text when it has decimals (see `parseJson`). */
export type Credits = string | number

export interface Wallet {
  balance: Credits
  held: Credits
  available: Credits
}
export interface Account {
  id: string
  name: string
  wallet: Wallet
  /** Below this balance the wallet raises a `balance.low` alert; null: none. */
  low_balance_threshold?: Credits | null
  created_at?: string
}
export interface User {
  iss: string
  sub: string
  allotment: Wallet | null
}
export interface ApiKey {
  id: string
  account_id: string
  env: string
  name: string | null
  hint: string
  scopes: string[] | null
  allowed_models: string[] | null
  monthly_quota: Credits | null
  /** Spend limits by period in credits; null: none in that period. */
  quotas?: Quotas
  /** Settled spend in the current periods: only in the answer about one key. */
  spent?: Record<QuotaPeriod, Credits>
  allotment: Wallet | null
  /** Below this balance the key's allotment raises a `balance.low` alert; null: none. */
  low_balance_threshold?: Credits | null
  rpm: number | null
  tpm: number | null
  expires_at: string | null
  revoked_at: string | null
  created_at: string
  key?: string
}
export const QUOTA_PERIODS = ['day', 'week', 'month'] as const
export type QuotaPeriod = (typeof QUOTA_PERIODS)[number]
export type Quotas = Record<QuotaPeriod, Credits | null>

export interface LedgerEntry {
  id: string
  created_at: string
  kind: string
  amount: Credits
  account_id: string | null
  key_id: string | null
  user_sub: string | null
  request_id: string | null
  model: string | null
  usage: { input_tokens?: number; output_tokens?: number } | null
  uncollected: Credits
  note: string | null
}
export interface UsageRow {
  period: string
  account_id?: string
  key_id?: string
  user_sub?: string
  model?: string
  requests: number
  input_tokens: number
  output_tokens: number
  cache_read_tokens: number
  cache_write_tokens: number
  cost: Credits
  uncollected: Credits
}
/** One request as the gateway recorded it (GET /admin/v1/requests). */
export interface RequestRecord {
  request_id: string
  created_at: string
  method: string
  route: string
  status: number
  error_code: string | null
  account_id: string | null
  key_id: string | null
  user_sub: string | null
  model_requested: string | null
  model: string | null
  attempts: { provider: string; status?: number; reason?: string; duration_ms: number }[]
  tokens: { input: number; output: number; cache_read: number; cache_write: number } | null
  cost: Credits | null
  duration_ms: number
  session_id: string | null
}
export interface RequestDetail extends RequestRecord {
  ledger: LedgerEntry[]
}
/** Requests per period (GET /admin/v1/requests/stats): only periods with requests are listed. */
export interface RequestStatsRow {
  period: string
  requests: number
  refused: number
  failed: number
  p50_ms: number | null
  p95_ms: number | null
}

/** The alert types a webhook can receive, as the admin API names them. */
export const ALERT_TYPES = ['balance.low', 'quota.threshold', 'webhook.test'] as const
export type AlertType = (typeof ALERT_TYPES)[number]

export interface Webhook {
  id: string
  url: string
  events: AlertType[]
  description: string | null
  created_at: string
  /** Only in the answer that created it. */
  secret?: string
}
export interface Delivery {
  id: string
  type: AlertType
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  last_status_code: number | null
  last_error: string | null
  created_at: string
  delivered_at: string | null
}
export interface Page<Row> {
  data: Row[]
  next_cursor?: string | null
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: () => sessionStorage.removeItem(TOKEN_KEY),
}

/**
 * JSON with every decimal number kept as the text the API wrote (`1.500000`, `0.000008`):
 * JSON.parse's reviver sees each number's source, so amounts are shown exactly, never
 * rounded through a float.
 */
export function parseJson(text: string): unknown {
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && /[.eE]/.test(context.source) ? context.source : value,
  )
}

/** A query string of the non-empty values. */
export function query(values: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== '') search.set(name, String(value))
  const text = search.toString()
  return text ? `?${text}` : ''
}

async function call(method: string, path: string, body?: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${session.token() ?? ''}` }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(path, { method, headers, body })
  if (response.status === 401) {
    session.signOut()
    window.dispatchEvent(new Event('tollgate:signed-out'))
  }
  if (!response.ok) throw new ApiError(response.status, await errorMessage(response))
  return response
}

async function errorMessage(response: Response): Promise<string> {
  const text = await response.text()
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } }
    return parsed.error?.message ?? `${response.status} ${text}`
  } catch {
    return `${response.status} ${response.statusText}`
  }
}

/** Whether `token` is the admin token: a one-row ledger read, before the token is kept. */
export async function isAdminToken(token: string): Promise<boolean> {
  const response = await fetch('/admin/v1/ledger?limit=1', { headers: { authorization: `Bearer ${token}` } })
  if (response.status === 401) return false
  if (!response.ok) throw new ApiError(response.status, await errorMessage(response))
  return true
}

export async function get<Answer>(path: string): Promise<Answer> {
  return parseJson(await (await call('GET', path)).text()) as Answer
}

/** `body` is JSON text, so typed amounts go out as the operator wrote them (`jsonBody`). */
export async function send<Answer>(method: 'POST' | 'PATCH', path: string, body = '{}'): Promise<Answer> {
  return parseJson(await (await call(method, path, body)).text()) as Answer
}

/** Deletes what `path` names. */
export async function remove<Answer>(path: string): Promise<Answer> {
  return parseJson(await (await call('DELETE', path)).text()) as Answer
}

/** The gateway's Prometheus text (`/metrics` takes the admin token too). */
export async function metricsText(): Promise<string> {
  return (await call('GET', '/metrics')).text()
}

/** A JSON value that is already JSON text: an amount exactly as typed. */
export class RawNumber {
  constructor(readonly text: string) {}
}

/** A value `jsonBody` writes: a nested object is written the same way. */
export type JsonField = string | number | boolean | null | string[] | RawNumber | undefined | { [name: string]: JsonField }

/** JSON text of `fields`, writing RawNumber values unquoted and leaving undefined ones out. */
export function jsonBody(fields: Record<string, JsonField>): string {
  const parts: string[] = []
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue
    const text =
      value instanceof RawNumber ? value.text : value !== null && typeof value === 'object' && !Array.isArray(value) ? jsonBody(value) : JSON.stringify(value)
    parts.push(`${JSON.stringify(name)}:${text}`)
  }
  return `{${parts.join(',')}}`
}

/** An amount typed by the operator, checked as the API takes it: up to six decimals. */
export function amountText(text: string, allowNegative: boolean): RawNumber {
  const trimmed = text.trim()
  const pattern = allowNegative ? /^-?\d+(\.\d{1,6})?$/ : /^\d+(\.\d{1,6})?$/
  if (!pattern.test(trimmed))
    throw new ApiError(400, `'${text}' is not an amount of credits with at most six decimals${allowNegative ? '' : ' (and not negative)'}.`)
  return new RawNumber(trimmed)
}

/** Fetches an export (`format=csv`) with the token and hands it to the browser as a download. */
export async function download(path: string, filename: string): Promise<void> {
  const blob = await (await call('GET', path)).blob()
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = filename
  document.body.appendChild(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
