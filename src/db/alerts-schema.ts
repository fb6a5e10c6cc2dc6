import { sql } from 'drizzle-orm'
import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { createdAt, micros } from './columns'

/** The alert types a webhook can receive (docs/operations.md#alerts). */
export type AlertType = 'balance.low' | 'quota.threshold' | 'webhook.test'

/** An operator's receiver of alerts. The secret signs every delivery, so it is kept as it was shown (once). */
export const webhooks = pgTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    url: text('url').notNull(),
    events: jsonb('events').$type<AlertType[]>().notNull(),
    description: text('description'),
    /** `whsec_` + base64 of 32 random bytes. Never logged, never listed. */
    secret: text('secret').notNull(),
    createdAt: createdAt(),
  },
  (table) => [index('webhooks_created').on(table.createdAt, table.id)],
)

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

/**
 * One event to one webhook: written before anything is sent, in the transaction that records
 * what raised it, and claimed by one instance at a time until it is delivered or given up.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    /** The event's id (`msg_…`), sent as `webhook-id`: the same on every attempt and for every webhook. */
    eventId: text('event_id').notNull(),
    type: text('type').$type<AlertType>().notNull(),
    /** The exact body signed and sent, `{type, timestamp, data}`: every attempt sends the same bytes. */
    body: text('body').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
    /** The instance sending it now, until `claimed_until`; a crashed instance's claim is taken over after it. */
    claimToken: text('claim_token'),
    claimedUntil: timestamp('claimed_until', { withTimezone: true }),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (table) => [
    primaryKey({ columns: [table.webhookId, table.eventId] }),
    index('webhook_deliveries_due').on(table.nextAttemptAt).where(sql`${table.status} = 'pending'`),
    index('webhook_deliveries_list').on(table.webhookId, table.createdAt, table.eventId),
  ],
)

/**
 * Wallets whose low-balance alert has been raised: one row per crossing below the threshold,
 * deleted (the alert armed again) once a top-up lifts the balance back to it. The primary key
 * makes "once per crossing" hold across instances.
 */
export const balanceAlerts = pgTable('balance_alerts', {
  walletId: text('wallet_id').primaryKey(),
  threshold: micros('threshold').notNull(),
  createdAt: createdAt(),
})

/** The quota thresholds reached, one row per threshold per period: the primary key makes each alert once, whatever the instances. */
export const quotaAlerts = pgTable(
  'quota_alerts',
  {
    scope: text('scope').$type<'key' | 'user'>().notNull(),
    /** The key's id, or the user's id. */
    subjectId: text('subject_id').notNull(),
    period: text('period').$type<'day' | 'week' | 'month'>().notNull(),
    /** The period's first instant, ISO-8601 UTC. */
    periodStart: text('period_start').notNull(),
    percent: integer('percent').notNull(),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.scope, table.subjectId, table.period, table.periodStart, table.percent] })],
)
