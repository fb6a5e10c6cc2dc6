import type { ApiKeyRow } from '../auth/api-keys'
import type { AccountWithWallet } from '../billing/accounts'
import { balanceView, creditsToMicros, microsToCredits } from '../billing/money'
import type { WalletRow } from '../billing/wallets'
import { InvalidRequestError } from '../errors/kinds'

/** Admin API shapes (CONTRACT.md §4 and §7): credits as numbers, times as ISO-8601. */

export function accountView({ account, wallet }: AccountWithWallet) {
  return { id: account.id, name: account.name, created_at: account.createdAt.toISOString(), wallet: balanceView(wallet) }
}

export function keyView(row: ApiKeyRow, allotment: WalletRow | undefined) {
  return {
    id: row.id,
    object: 'api_key' as const,
    account_id: row.accountId,
    env: row.env,
    name: row.name,
    hint: row.hint,
    scopes: row.scopes,
    allowed_models: row.allowedModels,
    monthly_quota: row.monthlyQuota === null ? null : microsToCredits(row.monthlyQuota),
    allotment: allotment ? balanceView(allotment) : null,
    rpm: row.rpm,
    tpm: row.tpm,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  }
}

/** A credit amount from a request, as micro-credits; `param` names the field in the error. */
export function amountToMicros(credits: number, param: string): bigint {
  const micros = creditsToMicros(credits)
  if (micros === undefined) {
    throw new InvalidRequestError(`${param} must be a number of credits with at most 6 decimals.`, { param })
  }
  return micros
}
