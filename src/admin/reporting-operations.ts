import { Type } from '@sinclair/typebox'
import type { ApiKeyChanges } from '../auth/api-keys'
import { listAccounts } from '../billing/accounts'
import { LEDGER_KINDS, type LedgerEntryView, type LedgerFilter, listLedger } from '../billing/ledger'
import { spendNow } from '../billing/spend'
import { findWallet } from '../billing/wallets'
import { InvalidRequestError, NotFoundError } from '../errors/kinds'
import { DEFAULT_PAGE_SIZE, decodeSequence, decodeTimeAndId, encodeCursor, PageQuery, pageOf, timeAndIdCursor } from './cursor'
import { idParam } from './id-param'
import { KeyFields } from './key-fields'
import { pageOrExport } from './listing'
import { type AdminOperation, defineOperation } from './operation'
import { quotaChanges } from './quota-fields'
import { accountView, amountToMicros, keyView, parseTimestamp, userView } from './views'

/** Rows read per query while an export streams: one page in memory at a time. */
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

/** `YYYY-MM-DD` (midnight UTC) or a date and time with its offset: a time without one would depend on the server's zone. */
export const Instant = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
  description: 'ISO-8601: a date (midnight UTC) or a date and time with Z or an offset',
})

/**
 * The instant as text Postgres reads exactly (a date alone is midnight UTC). Each field is
 * checked against the calendar: JavaScript's Date turns 2030-02-30 into March 2nd, and
 * Postgres refuses it; either way it is the client's mistake, a 400 naming the parameter.
 */
export function instantText(value: string | undefined, param: string): string | undefined {
  if (value === undefined) return undefined
  const text = value.length === 10 ? `${value}T00:00:00Z` : value
  const [, year, month, day, hour, minute, second = '0', offsetHour = '0', offsetMinute = '0'] =
    /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):(\d{2}))$/.exec(text) ?? []
  const calendarDay = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)))
  const valid =
    year !== undefined &&
    calendarDay.getUTCFullYear() === Number(year) &&
    calendarDay.getUTCMonth() === Number(month) - 1 &&
    calendarDay.getUTCDate() === Number(day) &&
    Number(hour) <= 23 &&
    Number(minute) <= 59 &&
    Number(second) <= 59 &&
    Number(offsetHour) <= 15 &&
    Number(offsetMinute) <= 59
  if (!valid) throw new InvalidRequestError(`${param} is not a valid ISO-8601 time.`, { param })
  return text
}

export const REPORTING_OPERATIONS: readonly AdminOperation[] = [
  defineOperation({
    command: ['accounts', 'list'],
    method: 'GET',
    path: '/accounts',
    summary: 'Accounts with their wallets, newest first, a page at a time',
    query: Type.Object(PageQuery),
    run: async (services, { query }) => {
      const limit = query.limit ?? DEFAULT_PAGE_SIZE
      const rows = await listAccounts(services.db, limit + 1, decodeTimeAndId('accounts', query.cursor))
      return pageOf(rows, limit, accountView, (row) => timeAndIdCursor('accounts', row.position))
    },
  }),
  defineOperation({
    command: ['keys', 'list'],
    method: 'GET',
    path: '/keys',
    summary: "API keys' records (never their secrets), of one account or all, newest first, a page at a time",
    query: Type.Object({ account_id: Type.Optional(Type.String({ minLength: 1, description: "Only this account's keys" })), ...PageQuery }),
    run: async (services, { query }) => {
      const limit = query.limit ?? DEFAULT_PAGE_SIZE
      const rows = await services.keys.list({ accountId: query.account_id, limit: limit + 1, after: decodeTimeAndId('keys', query.cursor) })
      return pageOf(
        rows,
        limit,
        (row) => keyView(row.row, row.allotment),
        (row) => timeAndIdCursor('keys', row.position),
      )
    },
  }),
  defineOperation({
    command: ['keys', 'update'],
    method: 'PATCH',
    path: '/keys/:id',
    summary:
      "Change a key's name, scopes, models, spend limits, low-balance threshold, rate limits or expiry (null clears): at once here, within 5 seconds on other instances",
    params: idParam('API key', 'key'),
    body: Type.Object(
      {
        name: Type.Optional(Nullable(KeyFields.name)),
        scopes: Type.Optional(Nullable(KeyFields.scopes)),
        allowed_models: Type.Optional(Nullable(KeyFields.allowed_models)),
        monthly_quota: Type.Optional(Nullable(KeyFields.monthly_quota)),
        quotas: Type.Optional(KeyFields.quotas),
        low_balance_threshold: Type.Optional(Nullable(KeyFields.low_balance_threshold)),
        rpm: Type.Optional(Nullable(KeyFields.rpm)),
        tpm: Type.Optional(Nullable(KeyFields.tpm)),
        expires_at: Type.Optional(Nullable(KeyFields.expires_at)),
      },
      { additionalProperties: false },
    ),
    run: async (services, { params, body }) => {
      const changes: ApiKeyChanges = {}
      if (body.name !== undefined) changes.name = body.name
      if (body.scopes !== undefined) changes.scopes = body.scopes
      if (body.allowed_models !== undefined) changes.allowedModels = body.allowed_models
      const quotas = quotaChanges(body)
      if (quotas.day !== undefined) changes.dayQuota = quotas.day
      if (quotas.week !== undefined) changes.weekQuota = quotas.week
      if (quotas.month !== undefined) changes.monthlyQuota = quotas.month
      if (body.low_balance_threshold !== undefined) {
        changes.lowBalanceThreshold = body.low_balance_threshold === null ? null : amountToMicros(body.low_balance_threshold, 'low_balance_threshold')
      }
      if (body.rpm !== undefined) changes.rpm = body.rpm
      if (body.tpm !== undefined) changes.tpm = body.tpm
      if (body.expires_at !== undefined) changes.expiresAt = body.expires_at === null ? null : parseTimestamp(body.expires_at, 'expires_at')
      const row = await services.keys.update(params.id, changes)
      if (!row) throw new NotFoundError(`No API key '${params.id}'.`)
      const [allotment, spent] = await Promise.all([findWallet(services.db, 'key_allotment', row.id), spendNow(services.db, row.id, services.now())])
      return keyView(row, allotment, spent)
    },
  }),
  defineOperation({
    command: ['users', 'list'],
    method: 'GET',
    path: '/users',
    summary: 'Users known from their tokens, with their allotments, newest first, a page at a time',
    query: Type.Object(PageQuery),
    run: async (services, { query }) => {
      const limit = query.limit ?? DEFAULT_PAGE_SIZE
      const rows = await services.users.list(limit + 1, decodeTimeAndId('users', query.cursor))
      return pageOf(
        rows,
        limit,
        (row) => userView(row.row, row.allotment),
        (row) => timeAndIdCursor('users', row.position),
      )
    },
  }),
  defineOperation({
    command: ['ledger'],
    method: 'GET',
    path: '/ledger',
    summary: 'Ledger entries, newest first: a page at a time, or the whole selection streamed as CSV or JSON Lines',
    query: Type.Object({
      account_id: Type.Optional(Type.String({ description: "Only entries of this account's wallet and its keys" })),
      key_id: Type.Optional(Type.String({ description: "Only this API key's entries" })),
      user_sub: Type.Optional(Type.String({ description: "Only this user's entries (the `sub` of their tokens)" })),
      request_id: Type.Optional(Type.String({ description: "Only this request's entries (its `x-request-id`)" })),
      session_id: Type.Optional(
        Type.String({ maxLength: 128, description: "The client's session (the call's `x-claude-code-session-id`, `session_id` or `x-session-id` header)" }),
      ),
      model: Type.Optional(Type.String({ description: 'Only entries of calls this gateway model served' })),
      kind: Type.Optional(
        Type.Union(
          LEDGER_KINDS.map((kind) => Type.Literal(kind)),
          { description: `Only entries of this kind: ${LEDGER_KINDS.join(', ')}` },
        ),
      ),
      since: Type.Optional({ ...Instant, description: `${Instant.description}; inclusive` }),
      until: Type.Optional({ ...Instant, description: `${Instant.description}; exclusive` }),
      ...PageQuery,
      format: Type.Optional(
        Type.Union([Type.Literal('json'), Type.Literal('csv'), Type.Literal('jsonl')], {
          description: 'json (a page, the default), or csv or jsonl: every entry selected, streamed',
        }),
      ),
    }),
    run: async (services, { query }) => {
      const filter: LedgerFilter = {
        accountId: query.account_id,
        keyId: query.key_id,
        userSub: query.user_sub,
        requestId: query.request_id,
        sessionId: query.session_id,
        model: query.model,
        kind: query.kind,
        since: instantText(query.since, 'since'),
        until: instantText(query.until, 'until'),
      }
      return pageOrExport(
        {
          name: 'ledger',
          fields: LEDGER_FIELDS,
          read: (limit, beforeId) => listLedger(services.reportsDb, filter, { limit, beforeId }),
          positionOf: (row) => row.id,
          view: (row) => row.view,
          cursorOf: (id) => encodeCursor('ledger', id.toString()),
        },
        query,
        decodeSequence('ledger', query.cursor),
      )
    },
  }),
]

const LEDGER_FIELDS = [
  'id',
  'created_at',
  'kind',
  'amount',
  'payer',
  'account_id',
  'key_id',
  'user_sub',
  'env',
  'request_id',
  'session_id',
  'model',
  'route',
  'usage',
  'uncollected',
  'note',
] as const satisfies readonly (keyof LedgerEntryView)[]
