import { Type } from '@sinclair/typebox'
import { type ActivityFilter, type ActivityRecordRow, activityStats, findActivity, listActivity } from '../activity/activity-queries'
import { type LedgerEntryView, listLedger } from '../billing/ledger'
import { creditsJson } from '../billing/money'
import { NotFoundError } from '../errors/kinds'
import { decodeTimeAndId, PageQuery, timeAndIdCursor } from './cursor'
import { pageOrExport } from './listing'
import { type AdminOperation, defineOperation } from './operation'
import { Instant, instantText } from './reporting-operations'

/**
 * The request activity (docs/operations.md#request-activity): every request to a billable or an
 * admin endpoint, billed or not, listed and filtered, one request with its ledger entries, and
 * the dashboard's counts and latencies by period.
 */

/** A request has a hold, a charge and a release at most; a page this size holds them all. */
const LEDGER_ENTRIES_PER_REQUEST = 100

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 255, description })
const Since = { ...Instant, description: `${Instant.description}; inclusive` }
const Until = { ...Instant, description: `${Instant.description}; exclusive` }

const FILTERS = {
  kind: Type.Optional(
    Type.Union([Type.Literal('api'), Type.Literal('admin')], {
      description: '`api`: only calls to the billable API (the console and admin tools left out); `admin`: only calls to the admin API',
    }),
  ),
  account_id: Type.Optional(Id("Only the requests of this account's keys")),
  key_id: Type.Optional(Id('Only the requests made with this API key')),
  user_sub: Type.Optional(Id("Only the requests of this signed-in user (the identity provider's subject)")),
  model: Type.Optional(Id('Only the requests this model served, or that asked for it (an alias, a bare name)')),
  status: Type.Optional(
    Type.String({
      pattern: '^[1-5]([0-9]{2}|xx)$',
      description: 'Only the requests answered with this HTTP status (`429`), or a class of them (`4xx`, `5xx`); 499 is a client that left',
    }),
  ),
  error_code: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: 'Only the requests answered with this error code (`insufficient_balance`)' }),
  ),
  session_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description: "Only the calls of this client session (the call's `x-claude-code-session-id`, `session_id` or `x-session-id` header)",
    }),
  ),
  since: Type.Optional(Since),
  until: Type.Optional(Until),
}

const RECORD_FIELDS = [
  'request_id',
  'created_at',
  'method',
  'route',
  'status',
  'error_code',
  'account_id',
  'key_id',
  'user_sub',
  'model_requested',
  'model',
  'attempts',
  'tokens',
  'cost',
  'duration_ms',
  'session_id',
] as const satisfies readonly (keyof ActivityView)[]

export type ActivityView = ReturnType<typeof activityView>

/** One record as the admin API writes it: the cost in credits exact to six decimals. */
export function activityView(row: ActivityRecordRow) {
  return {
    request_id: row.requestId,
    created_at: row.createdAt.toISOString(),
    method: row.method,
    route: row.route,
    status: row.status,
    error_code: row.errorCode,
    account_id: row.accountId,
    key_id: row.keyId,
    user_sub: row.userSub,
    model_requested: row.modelRequested,
    model: row.model,
    attempts: row.attempts,
    tokens: row.tokens,
    cost: creditsJson(row.cost),
    duration_ms: row.durationMs,
    session_id: row.sessionId,
  }
}

export const ACTIVITY_OPERATIONS: readonly AdminOperation[] = [
  defineOperation({
    command: ['requests', 'list'],
    method: 'GET',
    path: '/requests',
    summary: 'Requests to billable and admin endpoints (billed, refused, failed or left), newest first: a page at a time, or streamed as CSV or JSON Lines',
    query: Type.Object({
      ...FILTERS,
      ...PageQuery,
      format: Type.Optional(
        Type.Union([Type.Literal('json'), Type.Literal('csv'), Type.Literal('jsonl')], {
          description: 'json (a page, the default), or csv or jsonl: every request selected, streamed',
        }),
      ),
    }),
    run: async (services, { query }) => {
      const filter: ActivityFilter = {
        kind: query.kind,
        accountId: query.account_id,
        keyId: query.key_id,
        userSub: query.user_sub,
        model: query.model,
        status: statusFilter(query.status),
        errorCode: query.error_code,
        sessionId: query.session_id,
        since: instantText(query.since, 'since'),
        until: instantText(query.until, 'until'),
      }
      return pageOrExport(
        {
          name: 'requests',
          fields: RECORD_FIELDS,
          read: (limit, after) => listActivity(services.reportsDb, filter, { limit, after }),
          positionOf: (row) => row.position,
          view: (row) => activityView(row.record),
          cursorOf: (position) => timeAndIdCursor('requests', position),
        },
        query,
        decodeTimeAndId('requests', query.cursor),
      )
    },
  }),
  defineOperation({
    command: ['requests', 'stats'],
    method: 'GET',
    path: '/requests/stats',
    summary: 'Requests, refusals (4xx), failures (5xx) and the p50 and p95 duration by hour or day, oldest first; periods without requests are left out',
    query: Type.Object({
      group_by: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { description: '`hour` or `day` (the default); UTC' })),
      kind: FILTERS.kind,
      account_id: FILTERS.account_id,
      key_id: FILTERS.key_id,
      model: FILTERS.model,
      since: FILTERS.since,
      until: FILTERS.until,
    }),
    run: async (services, { query }) => {
      const data = await activityStats(services.reportsDb, query.group_by ?? 'day', {
        kind: query.kind,
        accountId: query.account_id,
        keyId: query.key_id,
        model: query.model,
        since: instantText(query.since, 'since'),
        until: instantText(query.until, 'until'),
      })
      return { object: 'list', data }
    },
  }),
  defineOperation({
    command: ['requests', 'get'],
    method: 'GET',
    path: '/requests/:request_id',
    summary: "One request's record and its ledger entries (hold, charge, release), oldest first",
    params: Type.Object({ request_id: Type.String({ minLength: 1, maxLength: 100, description: 'The request id (`x-request-id` of its answer)' }) }),
    run: async (services, { params }) => {
      const row = await findActivity(services.reportsDb, params.request_id)
      if (!row) {
        throw new NotFoundError(
          `No request '${params.request_id}' in the activity: records are kept ${services.config.activityRetentionDays} days, and written within seconds of the request's end.`,
        )
      }
      const entries = await listLedger(services.reportsDb, { requestId: row.requestId }, { limit: LEDGER_ENTRIES_PER_REQUEST })
      const ledger: LedgerEntryView[] = entries.map((entry) => entry.view).reverse()
      return { ...activityView(row), ledger }
    },
  }),
]

/** `429` is that status; `4xx` every status from 400 to 499. */
function statusFilter(text: string | undefined): ActivityFilter['status'] {
  if (text === undefined) return undefined
  return text.endsWith('xx') ? { class: Number(text[0]) } : { exact: Number(text) }
}
