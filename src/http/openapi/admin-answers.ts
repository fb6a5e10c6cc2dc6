import { type TSchema, t } from 'elysia'
import { BalanceSchema, JsonInteger } from '../schemas'
import { MODEL_ANSWERS } from './model-answers'

/**
 * What each admin operation answers, for the API document only (docs/operations.md#admin-api):
 * the shapes come from src/admin/views.ts and the operations themselves, which the CLI shares, so
 * they are documented here rather than validated on the way out.
 */
const Nullable = (schema: TSchema) => t.Union([schema, t.Null()])
const Time = t.String({ format: 'date-time' })

const Quotas = t.Object(
  { day: Nullable(t.Number()), week: Nullable(t.Number()), month: Nullable(t.Number()) },
  { description: 'Spend limits in credits per UTC day, ISO week and calendar month; null: none' },
)
const Spent = t.Object({ day: t.Number(), week: t.Number(), month: t.Number() }, { description: 'Credits charged in the current periods' })
const UserAllotmentAnswer = t.Composite([
  BalanceSchema,
  t.Object({ quotas: Quotas, quotas_from: Nullable(t.Union([t.Literal('user'), t.Literal('default')])), spent: Spent }),
])
const AccountAnswer = t.Object({ id: t.String(), name: t.String(), created_at: Time, wallet: BalanceSchema, low_balance_threshold: Nullable(t.Number()) })
const KeyAnswer = t.Object(
  {
    id: t.String(),
    object: t.Literal('api_key'),
    account_id: t.String(),
    env: t.Union([t.Literal('prod'), t.Literal('dev')]),
    name: Nullable(t.String()),
    hint: t.String(),
    scopes: Nullable(t.Array(t.String())),
    allowed_models: Nullable(t.Array(t.String())),
    monthly_quota: Nullable(t.Number()),
    quotas: Quotas,
    spent: t.Optional(Spent),
    allotment: Nullable(BalanceSchema),
    low_balance_threshold: Nullable(t.Number()),
    rpm: Nullable(JsonInteger({})),
    tpm: Nullable(JsonInteger({})),
    expires_at: Nullable(Time),
    revoked_at: Nullable(Time),
    created_at: Time,
  },
  { additionalProperties: true },
)
const LedgerEntry = t.Object({ id: t.String(), kind: t.String(), amount: t.Number(), created_at: Time }, { additionalProperties: true })
const UserAnswer = t.Object({ iss: t.String(), sub: t.String(), allotment: Nullable(BalanceSchema), created_at: Time })

const AlertTypeAnswer = t.Union([t.Literal('balance.low'), t.Literal('quota.threshold'), t.Literal('webhook.test')])
const WebhookAnswer = t.Object({ id: t.String(), url: t.String(), events: t.Array(AlertTypeAnswer), description: Nullable(t.String()), created_at: Time })
const DeliveryAnswer = t.Object({
  id: t.String({ description: "The event's id, sent as `webhook-id`" }),
  type: AlertTypeAnswer,
  status: t.Union([t.Literal('pending'), t.Literal('delivered'), t.Literal('failed')]),
  attempts: JsonInteger({}),
  last_status_code: Nullable(JsonInteger({})),
  last_error: Nullable(t.String()),
  created_at: Time,
  delivered_at: Nullable(Time),
})

/** A page of a list: pass `next_cursor` as `cursor` for the next one; null on the last page. */
const Page = (row: TSchema) =>
  t.Object({
    object: t.Literal('list'),
    data: t.Array(row),
    next_cursor: Nullable(t.String({ description: "The next page's `cursor`; null on the last page" })),
  })

const UsageSummaryRow = t.Object({
  period: t.String({ description: '`YYYY-MM-DDTHH:00:00Z`, `YYYY-MM-DD` or `YYYY-MM` (UTC)' }),
  account_id: t.Optional(Nullable(t.String())),
  key_id: t.Optional(Nullable(t.String())),
  user_sub: t.Optional(Nullable(t.String())),
  model: t.Optional(Nullable(t.String())),
  session_id: t.Optional(Nullable(t.String({ description: "The client's session; null for calls without one" }))),
  requests: JsonInteger({}),
  input_tokens: JsonInteger({}),
  output_tokens: JsonInteger({}),
  cache_read_tokens: JsonInteger({}),
  cache_write_tokens: JsonInteger({ description: 'Prompt-cache writes for the default five minutes' }),
  cache_write_1h_tokens: JsonInteger({ description: 'Prompt-cache writes for one hour' }),
  cost: t.Number(),
  uncollected: t.Number(),
})

const ActivityRecord = t.Object({
  request_id: t.String(),
  created_at: Time,
  method: t.String(),
  route: t.String({ description: "The endpoint's path template" }),
  status: JsonInteger({ description: 'The HTTP status answered; 499 when the client left first' }),
  error_code: Nullable(t.String({ description: 'The code of the error answered; null for a success' })),
  account_id: Nullable(t.String()),
  key_id: Nullable(t.String()),
  user_sub: Nullable(t.String()),
  model_requested: Nullable(t.String({ description: 'The model id the client named (an alias, a bare name)' })),
  model: Nullable(t.String({ description: 'The catalogue model that served; null when none did' })),
  attempts: t.Array(
    t.Object({
      provider: t.String(),
      status: t.Optional(JsonInteger({ description: "The upstream's HTTP status" })),
      reason: t.Optional(t.String({ description: 'Why no status came: timeout, unreachable, client_closed, refused' })),
      duration_ms: t.Number(),
    }),
  ),
  tokens: Nullable(t.Object({ input: JsonInteger({}), output: JsonInteger({}), cache_read: JsonInteger({}), cache_write: JsonInteger({}) })),
  cost: t.Number({ description: 'Credits charged; 0 when nothing was' }),
  duration_ms: t.Number(),
  session_id: Nullable(t.String()),
})
const ActivityStatsRow = t.Object({
  period: t.String({ description: '`YYYY-MM-DDTHH:00:00Z` or `YYYY-MM-DD` (UTC)' }),
  requests: JsonInteger({}),
  refused: JsonInteger({ description: 'Answered with a 4xx other than 499' }),
  failed: JsonInteger({ description: 'Answered with a 5xx' }),
  p50_ms: Nullable(t.Number({ description: 'Median duration in milliseconds' })),
  p95_ms: Nullable(t.Number({ description: '95th percentile duration in milliseconds' })),
})

/** Keyed by `METHOD path` as the operations name them (relative to /admin/v1). */
export const ADMIN_ANSWERS: Readonly<Record<string, { description: string; schema: TSchema }>> = {
  'GET /accounts': { description: 'A page of accounts, newest first', schema: Page(AccountAnswer) },
  'GET /keys': { description: "A page of keys' records, newest first, never their secrets", schema: Page(KeyAnswer) },
  'PATCH /keys/:id': { description: "The key's record after the change", schema: KeyAnswer },
  'GET /users': { description: 'A page of users with their allotments, newest first', schema: Page(UserAnswer) },
  'POST /accounts': { description: 'The new account', schema: AccountAnswer },
  'GET /accounts/:id': { description: 'The account', schema: AccountAnswer },
  'PATCH /accounts/:id': { description: 'The account after the change', schema: AccountAnswer },
  'POST /webhooks': {
    description: 'The new webhook; `secret` signs its deliveries and is shown only here',
    schema: t.Composite([WebhookAnswer, t.Object({ secret: t.String() })]),
  },
  'GET /webhooks': { description: 'Every webhook, never their secrets', schema: t.Object({ object: t.Literal('list'), data: t.Array(WebhookAnswer) }) },
  'DELETE /webhooks/:id': { description: 'The webhook is gone', schema: t.Object({ id: t.String(), deleted: t.Literal(true) }) },
  'POST /webhooks/:id/test': {
    description: 'The test event, stored and sent within seconds',
    schema: t.Object({ id: t.String(), type: t.Literal('webhook.test'), status: t.Literal('pending') }),
  },
  'GET /webhooks/:id/deliveries': { description: "A page of the webhook's deliveries, newest first", schema: Page(DeliveryAnswer) },
  'POST /accounts/:id/credits': { description: "The account's wallet after the credit", schema: t.Object({ wallet: BalanceSchema }) },
  'POST /keys': {
    description: 'The new key; `key` is the full secret, shown only here',
    schema: t.Composite([KeyAnswer, t.Object({ key: t.String() })], { additionalProperties: true }),
  },
  'GET /keys/:id': { description: "The key's record, never its secret", schema: KeyAnswer },
  'POST /keys/:id/revoke': { description: "The revoked key's record", schema: KeyAnswer },
  'POST /keys/:id/allotment': { description: "The key's allotment after the credit", schema: BalanceSchema },
  'POST /users/credits': { description: "The user's allotment after the credit", schema: BalanceSchema },
  'GET /users/allotment': { description: "The user's allotment, spend limits in force and spend in the current periods", schema: UserAllotmentAnswer },
  'PUT /users/quotas': { description: "The user's allotment, spend limits in force and spend in the current periods", schema: UserAllotmentAnswer },
  'PUT /users/default-quotas': { description: 'The default spend limits of users without their own', schema: t.Object({ quotas: Quotas }) },
  'GET /users/default-quotas': { description: 'The default spend limits of users without their own', schema: t.Object({ quotas: Quotas }) },
  'POST /custom-models': {
    description: 'The new custom model',
    schema: t.Object({ id: t.String(), account_id: t.String(), base_model: t.String(), system: Nullable(t.String()), defaults: t.Unknown() }),
  },
  'GET /usage': {
    description: 'Usage summaries, newest period first (`format=csv` or `jsonl` streams every row instead)',
    schema: t.Object({ object: t.Literal('list'), data: t.Array(UsageSummaryRow), next_cursor: Nullable(t.String()) }),
  },
  'GET /requests': {
    description: 'A page of request records, newest first; with `format=csv` or `format=jsonl`, every record selected, streamed',
    schema: Page(ActivityRecord),
  },
  'GET /requests/stats': {
    description: 'Counts and latencies by period, oldest first, only periods that had requests',
    schema: t.Object({ object: t.Literal('list'), data: t.Array(ActivityStatsRow) }),
  },
  'GET /requests/:request_id': {
    description: "The request's record and its ledger entries, oldest first",
    schema: t.Composite([ActivityRecord, t.Object({ ledger: t.Array(LedgerEntry) })]),
  },
  'GET /ledger': {
    description: 'A page of ledger entries, newest first; with `format=csv` or `format=jsonl`, every entry selected, streamed',
    schema: Page(LedgerEntry),
  },
  ...MODEL_ANSWERS,
}
