import type { ApiKeyRow } from '../auth/api-keys'
import { keyQuotas } from '../auth/payer-directory'
import type { UserRow } from '../auth/users'
import type { AccountWithWallet } from '../billing/accounts'
import { creditsJson, creditsToMicros } from '../billing/money'
import type { Period, PeriodQuotas } from '../billing/periods'
import type { Committed } from '../billing/spend'
import type { WalletRow } from '../billing/wallets'
import { InvalidRequestError } from '../errors/kinds'

/**
 * Admin API shapes (docs/operations.md#admin-api): credits as JSON numbers exact to six
 * decimals (never 8e-06), times as ISO-8601.
 */

export function walletView(wallet: { balance: bigint; held: bigint }) {
  return { balance: creditsJson(wallet.balance), held: creditsJson(wallet.held), available: creditsJson(wallet.balance - wallet.held) }
}

export function accountView({ account, wallet }: AccountWithWallet) {
  return {
    id: account.id,
    name: account.name,
    created_at: account.createdAt.toISOString(),
    wallet: walletView(wallet),
    low_balance_threshold: creditsOrNull(account.lowBalanceThreshold),
  }
}

/** A key's record; `spent` (its settled spend in the current periods) where the answer is about one key. */
export function keyView(row: ApiKeyRow, allotment: WalletRow | null | undefined, spent?: Record<Period, Committed>) {
  return {
    id: row.id,
    object: 'api_key' as const,
    account_id: row.accountId,
    env: row.env,
    name: row.name,
    hint: row.hint,
    scopes: row.scopes,
    allowed_models: row.allowedModels,
    monthly_quota: row.monthlyQuota === null ? null : creditsJson(row.monthlyQuota),
    quotas: quotasView(keyQuotas(row)),
    ...(spent ? { spent: spentView(spent) } : {}),
    allotment: allotment ? walletView(allotment) : null,
    low_balance_threshold: creditsOrNull(row.lowBalanceThreshold),
    rpm: row.rpm,
    tpm: row.tpm,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  }
}

function creditsOrNull(micros: bigint | null) {
  return micros === null ? null : creditsJson(micros)
}

export function userView(row: UserRow, allotment: WalletRow | null) {
  return { iss: row.issuer, sub: row.subject, allotment: allotment ? walletView(allotment) : null, created_at: row.createdAt.toISOString() }
}

/** A credit amount from a request, as micro-credits; `param` names the field in the error. */
export function amountToMicros(credits: number, param: string): bigint {
  const micros = creditsToMicros(credits)
  if (micros === undefined) {
    throw new InvalidRequestError(`${param} must be a number of credits with at most 6 decimals.`, { param })
  }
  return micros
}

export function parseTimestamp(value: string, param: string): Date {
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) throw new InvalidRequestError(`${param} is not a valid ISO-8601 time.`, { param })
  return date
}

/** Limits as the admin API and /v1/wallet show them: credits, or null for none. */
export function quotasView(quotas: PeriodQuotas) {
  return {
    day: quotas.day === null ? null : creditsJson(quotas.day),
    week: quotas.week === null ? null : creditsJson(quotas.week),
    month: quotas.month === null ? null : creditsJson(quotas.month),
  }
}

/** Settled spend in each current period, in credits. */
export function spentView(spend: Record<Period, Committed>) {
  return { day: creditsJson(spend.day.charged), week: creditsJson(spend.week.charged), month: creditsJson(spend.month.charged) }
}
