import type { ApiKeyRow } from '../auth/api-keys'
import type { UserRow } from '../auth/users'
import type { AccountWithWallet } from '../billing/accounts'
import { creditsJson, creditsToMicros } from '../billing/money'
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

export function keyView(row: ApiKeyRow, allotment: WalletRow | null | undefined) {
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
