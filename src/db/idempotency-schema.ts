import { sql } from 'drizzle-orm'
import { check, customType, index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { createdAt } from './columns'

/** Bytes as they are (bytea): Buffer is what both drivers send as binary. */
const bytes = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  toDriver: (value) => Buffer.from(value.buffer, value.byteOffset, value.byteLength),
})

export type IdempotentCallState = 'running' | 'done' | 'unkept'

/**
 * A billable call made with an `Idempotency-Key` (docs/api.md#idempotent-retries), one row per
 * caller (`key:<api key id>` or `user:<user id>`), path and key. Claimed by an insert that
 * conflicts for every other instance; `running` while its owner keeps `lease_until` ahead, then
 * `done` with the answer's exact bytes, or `unkept` when the answer could not be kept (too large,
 * lost): both until `expires_at`, 24 hours after the call ended, when a sweep deletes the row. A
 * running row whose lease lapsed (its instance died) may be taken over by another instance only
 * once no hold and no charge exist for its request (idempotency/idempotent-calls.ts).
 */
export const idempotentCalls = pgTable(
  'idempotent_calls',
  {
    scope: text('scope').notNull(),
    path: text('path').notNull(),
    key: text('key').notNull(),
    /** SHA-256 (hex) of the request: its canonical JSON or its form's fields and file bytes, and its query. */
    fingerprint: text('fingerprint').notNull(),
    state: text('state').$type<IdempotentCallState>().notNull(),
    /** The first call's x-request-id, replayed with its answer. */
    requestId: text('request_id').notNull(),
    /** The instance running the call (while `running`). */
    owner: text('owner').notNull(),
    leaseUntil: timestamp('lease_until', { withTimezone: true }).notNull(),
    status: integer('status'),
    contentType: text('content_type'),
    body: bytes('body'),
    createdAt: createdAt(),
    /** When a sweep deletes the row: 24 hours after the call ended (while running, after its lease). */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.scope, table.path, table.key] }),
    index('idempotent_calls_expires').on(table.expiresAt),
    check('idempotent_calls_key_length', sql`length(${table.key}) between 1 and 255`),
  ],
)
