import { sql } from 'drizzle-orm'
import { bigint, check, index, integer, jsonb, numeric, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import type { UsageRecord } from '../canonical/usage'
import { createdAt, micros } from './columns'

/**
 * Request fields a custom model sets when the client leaves them out (temperature, max_tokens,
 * anything the upstream takes): an operator's free-form JSON, merged into the request as it is.
 */
export type RequestDefaults = Record<string, unknown>

/**
 * Money is integer micro-credits (1 credit = 1,000,000) in bigint columns everywhere.
 * Ids are prefixed random strings (`acct_…`, `key_…`), except ledger entries, whose
 * identity column also gives their order.
 */

export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** Below this (micro-credits) the wallet's credit raises a `balance.low` alert (docs/operations.md#alerts); null: none. */
    lowBalanceThreshold: micros('low_balance_threshold'),
    createdAt: createdAt(),
  },
  // Admin lists read newest first, a page at a time after a (created_at, id) cursor.
  (table) => [
    index('accounts_created').on(table.createdAt, table.id),
    // The alert watch reads only the accounts that have a threshold.
    index('accounts_low_balance').on(table.id).where(sql`${table.lowBalanceThreshold} is not null`),
  ],
)

export type PayerKind = 'wallet' | 'key_allotment' | 'user_allotment'

/**
 * Every balance that can pay: an account's wallet, a key's allotment or a user's allotment.
 * One table so that a hold is one conditional update whoever pays. The checks make
 * overspending impossible even for a buggy caller: `held` never exceeds `balance`.
 */
export const wallets = pgTable(
  'wallets',
  {
    id: text('id').primaryKey(),
    kind: text('kind').$type<PayerKind>().notNull(),
    ownerId: text('owner_id').notNull(),
    balance: micros('balance').notNull().default(sql`0`),
    held: micros('held').notNull().default(sql`0`),
    createdAt: createdAt(),
    /** When an instance last asked the others to give back their credit leases on this wallet (docs/billing.md#credit-lease). */
    leasesRecalledAt: timestamp('leases_recalled_at', { withTimezone: true }),
  },
  (table) => [
    uniqueIndex('wallets_owner').on(table.kind, table.ownerId),
    check('wallets_held_not_negative', sql`${table.held} >= 0`),
    check('wallets_available_not_negative', sql`${table.balance} >= ${table.held}`),
  ],
)

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    env: text('env').$type<'prod' | 'dev'>().notNull(),
    name: text('name'),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    secretHash: text('secret_hash').notNull(),
    /** The last four characters, so people can tell their keys apart. */
    hint: text('hint').notNull(),
    scopes: jsonb('scopes').$type<string[]>(),
    allowedModels: jsonb('allowed_models').$type<string[]>(),
    /** Spend limits by period (docs/billing.md#spend-limits-by-period); `monthly_quota` is the month's. */
    monthlyQuota: micros('monthly_quota'),
    dayQuota: micros('day_quota'),
    weekQuota: micros('week_quota'),
    /** Below this (micro-credits) the key's allotment raises a `balance.low` alert (docs/operations.md#alerts); null: none. */
    lowBalanceThreshold: micros('low_balance_threshold'),
    rpm: integer('rpm'),
    tpm: integer('tpm'),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  // Admin lists read newest first after a (created_at, id) cursor, of every key or of one account's.
  (table) => [
    uniqueIndex('api_keys_secret_hash').on(table.secretHash),
    index('api_keys_account_created').on(table.accountId, table.createdAt, table.id),
    index('api_keys_created').on(table.createdAt, table.id),
    // The alert watch reads only the keys that have a threshold or a monthly quota.
    index('api_keys_low_balance').on(table.id).where(sql`${table.lowBalanceThreshold} is not null`),
    index('api_keys_monthly_quota').on(table.id).where(sql`${table.monthlyQuota} is not null`),
  ],
)

/** People signed in through the identity provider, known by issuer and subject. */
export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    /** The user's own spend limits by period; all null: the default (quotaDefaults) applies. */
    dayQuota: micros('day_quota'),
    weekQuota: micros('week_quota'),
    monthQuota: micros('month_quota'),
    createdAt: createdAt(),
  },
  (table) => [uniqueIndex('users_identity').on(table.issuer, table.subject), index('users_created').on(table.createdAt, table.id)],
)

/**
 * Credit reserved for one request while it runs: a row exists only while the hold is open. It
 * is deleted when the request settles or releases, or when a sweep expires it (`expiresAt` is
 * pushed forward while its process lives); the ledger keeps the history under `hold_id`.
 * No foreign keys here or on the ledger: checking one per row on the hot path costs more than
 * the code that always writes existing wallet ids.
 */
export const holds = pgTable(
  'holds',
  {
    id: text('id').primaryKey(),
    requestId: text('request_id').notNull(),
    /** The call's session, carried to its ledger entries; null for a lease or a call without one. */
    sessionId: text('session_id'),
    walletId: text('wallet_id').notNull(),
    payerType: text('payer_type').$type<PayerKind>().notNull(),
    accountId: text('account_id'),
    keyId: text('key_id'),
    userId: text('user_id'),
    userSub: text('user_sub'),
    env: text('env'),
    amount: micros('amount').notNull(),
    model: text('model').notNull(),
    /** The provider the call went to (the column keeps its first name, `route`). */
    provider: text('route').notNull(),
    /** The gateway process that owns the hold and keeps extending its expiry while alive. */
    instanceId: text('instance_id').notNull(),
    /**
     * The periods (billing/periods.ts) whose spend rows count this hold while it is open: its
     * payer's key, else its user. `day` and `week` are null on a hold that counts in no spend
     * row (a lease on a wallet, which names no key) and on holds taken before periods other
     * than the month existed, which count in their key's month alone.
     */
    month: text('month').notNull(),
    week: text('week'),
    day: text('day'),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  // No secondary indexes: the table holds only requests in flight, and each index would cost
  // an insert and a delete per request for lookups (sweeps, heartbeats) that scan a few rows.
  (table) => [
    check('holds_amount_not_negative', sql`${table.amount} >= 0`),
    // MAX_HOLD_MICROS (billing/money.ts): the code refuses larger holds first, with a 400.
    check('holds_amount_bounded', sql`${table.amount} <= 1000000000000000`),
  ],
)

/**
 * Committed spend (settled charges plus open holds) per payer and period (billing/periods.ts):
 * a key's, or a user's, per UTC day (`YYYY-MM-DD`), ISO week (`YYYY-Www`) and calendar month
 * (`YYYY-MM`). Kept in step with holds and charges in the same statements, so checking a quota is
 * one row lock per period. The columns keep their first names: `key_id` holds the spender's id
 * (a key's `key_…` or a user's `usr_…`), `month` the period's key. Rows of past periods are
 * deleted by the sweep (sweep-statements.ts).
 */
export const periodSpend = pgTable(
  'key_spend',
  {
    spenderId: text('key_id').notNull(),
    period: text('month').notNull(),
    charged: micros('charged').notNull().default(sql`0`),
    held: micros('held').notNull().default(sql`0`),
  },
  // No CHECK on held: Postgres checks an upsert's proposed row before finding the conflict, and
  // settlement upserts negative changes to rows that exist. Money itself is guarded on wallets.
  (table) => [primaryKey({ columns: [table.spenderId, table.period] })],
)

/** Spend limits that apply where none of their own are set: the `user` row, every user's default. */
export const quotaDefaults = pgTable('quota_defaults', {
  scope: text('scope').$type<'user'>().primaryKey(),
  dayQuota: micros('day_quota'),
  weekQuota: micros('week_quota'),
  monthQuota: micros('month_quota'),
})

export type LedgerKind = 'topup' | 'adjustment' | 'hold' | 'charge' | 'release' | 'expire'

/**
 * Append-only: rows are inserted, never updated or deleted. A wallet's balance equals the sum
 * of its top-ups and adjustments minus its charges.
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigint('id', { mode: 'bigint' }).primaryKey().generatedAlwaysAsIdentity(),
    createdAt: createdAt(),
    kind: text('kind').$type<LedgerKind>().notNull(),
    amount: micros('amount').notNull(),
    walletId: text('wallet_id').notNull(),
    payerType: text('payer_type').$type<PayerKind>().notNull(),
    accountId: text('account_id'),
    keyId: text('key_id'),
    userSub: text('user_sub'),
    env: text('env'),
    requestId: text('request_id'),
    /** The client's session the call belongs to (docs/billing.md#attribution); null without one. */
    sessionId: text('session_id'),
    holdId: text('hold_id'),
    model: text('model'),
    /** The provider the call went to (the column keeps its first name, `route`). */
    provider: text('route'),
    usage: jsonb('usage').$type<UsageRecord>(),
    uncollected: micros('uncollected').notNull().default(sql`0`),
    idempotencyKey: text('idempotency_key'),
    note: text('note'),
  },
  (table) => [
    // Only an adjustment takes money out by its sign; a charge, hold, release or expiry is never negative.
    check('ledger_amount_signed_by_kind', sql`${table.kind} = 'adjustment' or ${table.amount} >= 0`),
    check('ledger_uncollected_not_negative', sql`${table.uncollected} >= 0`),
    uniqueIndex('ledger_idempotency').on(table.walletId, table.idempotencyKey).where(sql`${table.idempotencyKey} is not null`),
    // Partial: a row is indexed only under the parties it has, which keeps the hot insert path lean.
    index('ledger_account').on(table.accountId, table.id).where(sql`${table.accountId} is not null`),
    index('ledger_key').on(table.keyId, table.id).where(sql`${table.keyId} is not null`),
    index('ledger_user').on(table.userSub, table.id).where(sql`${table.userSub} is not null`),
    index('ledger_request').on(table.requestId),
    index('ledger_session').on(table.sessionId, table.id).where(sql`${table.sessionId} is not null`),
  ],
)

/**
 * Billed requests summed per hour (UTC) and party: one row per hour, account, key, user and
 * model, over the ledger's charge entries. Written by the statement that writes the charges
 * (billing/hold-statements.ts), so a summary never disagrees with the ledger
 * (docs/billing.md#usage-rollups). A party a charge does not have is '' rather than null, so
 * the primary key covers every row. Sums that an untrusted upstream could push past bigint
 * (tokens, recorded costs) are `numeric`: a rollup never overflows and so never fails a charge.
 */
export const usageRollups = pgTable(
  'usage_rollups',
  {
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    accountId: text('account_id').notNull().default(''),
    keyId: text('key_id').notNull().default(''),
    userSub: text('user_sub').notNull().default(''),
    model: text('model').notNull().default(''),
    /** The client's session (docs/billing.md#attribution); '' for calls without one. */
    sessionId: text('session_id').notNull().default(''),
    requests: bigint('requests', { mode: 'bigint' }).notNull().default(sql`0`),
    inputTokens: numeric('input_tokens').notNull().default('0'),
    outputTokens: numeric('output_tokens').notNull().default('0'),
    cacheReadTokens: numeric('cache_read_tokens').notNull().default('0'),
    cacheWriteTokens: numeric('cache_write_tokens').notNull().default('0'),
    /** One-hour cache writes, apart from the five-minute ones in cache_write_tokens. */
    cacheWrite1hTokens: numeric('cache_write_1h_tokens').notNull().default('0'),
    /** Micro-credits charged (the ledger's charge amounts). */
    cost: numeric('cost').notNull().default('0'),
    /** Micro-credits recorded beyond the holds and not taken. */
    uncollected: numeric('uncollected').notNull().default('0'),
  },
  (table) => [
    primaryKey({ columns: [table.hour, table.accountId, table.keyId, table.userSub, table.model, table.sessionId] }),
    // A key's own usage (GET /v1/usage) and an account's or key's summaries read by party, then time.
    index('usage_rollups_key').on(table.keyId, table.hour),
    index('usage_rollups_account').on(table.accountId, table.hour),
  ],
)

/** An account's own named model: a base model with a system prompt and default parameters. */
export const customModels = pgTable(
  'custom_models',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    baseModel: text('base_model').notNull(),
    system: text('system'),
    defaults: jsonb('defaults').$type<RequestDefaults>(),
    createdAt: createdAt(),
  },
  (table) => [uniqueIndex('custom_models_name').on(table.accountId, table.name)],
)

export * from './activity-schema'
// The tables of the alerts, of idempotent calls and of request activity live in files of their own; drizzle-kit
// reads every table exported from here.
export * from './alerts-schema'
export * from './idempotency-schema'
