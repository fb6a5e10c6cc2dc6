import { doublePrecision, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { micros } from './columns'

/** One upstream call of a recorded request: its status, or why it has none, and how long it took. */
export interface ActivityAttempt {
  provider: string
  status?: number
  reason?: string
  duration_ms: number
}

/** The tokens a request was charged for. */
export interface ActivityTokens {
  input: number
  output: number
  cache_read: number
  cache_write: number
}

/**
 * Every request to a billable or an admin endpoint, billed or not (docs/operations.md#request-activity):
 * written by the activity writer off the request's path, in batches, and deleted once older
 * than the retention. Never money's source of truth: the ledger is; a lost record costs no
 * credit.
 */
export const requestActivity = pgTable(
  'request_activity',
  {
    requestId: text('request_id').primaryKey(),
    /** When the request arrived (its own clock, not the write's). */
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    method: text('method').notNull(),
    /** The endpoint's path template. */
    route: text('route').notNull(),
    status: integer('status').notNull(),
    /** The code of the error answered; null for a success. */
    errorCode: text('error_code'),
    accountId: text('account_id'),
    keyId: text('key_id'),
    userSub: text('user_sub'),
    /** The model id the client named (an alias, a custom model's name). */
    modelRequested: text('model_requested'),
    /** The catalogue model that served; null when none did. */
    model: text('model'),
    attempts: jsonb('attempts').$type<ActivityAttempt[]>().notNull(),
    tokens: jsonb('tokens').$type<ActivityTokens>(),
    cost: micros('cost').notNull(),
    durationMs: doublePrecision('duration_ms').notNull(),
    sessionId: text('session_id'),
  },
  // Lists read newest first after a (created_at, request_id) cursor, of everything or of one
  // account or key (the console's usual filters); other filters narrow those scans. Retention
  // deletes by created_at. Each index costs every insert, so there are no more.
  (table) => [
    index('request_activity_created').on(table.createdAt, table.requestId),
    index('request_activity_account').on(table.accountId, table.createdAt, table.requestId),
    index('request_activity_key').on(table.keyId, table.createdAt, table.requestId),
  ],
)
