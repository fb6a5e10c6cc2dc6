import { sql } from 'drizzle-orm'
import type { Queryable } from '../db/database'
import { queryRows } from '../db/rows'
import { newId } from '../util/ids'
import type { AlertType } from './alert-types'

/**
 * Stores one event as a pending delivery to every webhook that asks for its type, in the caller's
 * transaction (docs/operations.md#alerts): an event exists in the database before anything is
 * sent, and with the record of what raised it. The body is fixed here, so every attempt and every
 * webhook gets the same bytes, under the same `webhook-id`. With `onlyTo`, it goes to that
 * webhook alone, whatever it asks for (a test). Returns the event's id and how many webhooks it
 * goes to.
 */
export async function storeEvent(db: Queryable, type: AlertType, data: object, now: Date, onlyTo?: string): Promise<{ id: string; deliveries: number }> {
  const id = newId('msg')
  const body = JSON.stringify({ type, timestamp: now.toISOString(), data })
  const rows = await queryRows<{ webhook_id: string }>(
    db,
    sql`insert into webhook_deliveries (webhook_id, event_id, type, body, next_attempt_at, created_at)
      select id, ${id}, ${type}, ${body}, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
      from webhooks where ${onlyTo === undefined ? sql`events @> ${JSON.stringify([type])}::jsonb` : sql`id = ${onlyTo}`}
      returning webhook_id`,
  )
  return { id, deliveries: rows.length }
}

/** The alert types at least one webhook asks for: the watch looks for no other. */
export async function subscribedTypes(db: Queryable): Promise<Set<string>> {
  const rows = await queryRows<{ type: string }>(db, sql`select distinct jsonb_array_elements_text(events) as type from webhooks`)
  return new Set(rows.map((row) => row.type))
}
