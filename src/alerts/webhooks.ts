import { and, count, desc, eq, sql } from 'drizzle-orm'
import type { Database } from '../db/database'
import { createdAtText, olderThan, type TimeAndId } from '../db/keyset'
import { type AlertType, webhookDeliveries, webhooks } from '../db/schema'
import { newId } from '../util/ids'
import { storeEvent } from './events'
import { newWebhookSecret } from './signature'

export type WebhookRow = typeof webhooks.$inferSelect
export type DeliveryRow = typeof webhookDeliveries.$inferSelect

/** Webhooks a gateway keeps at most: each event is written once per webhook that asks for it. */
export const MAX_WEBHOOKS = 100

/** Creates a webhook with a new secret; undefined when the gateway already has MAX_WEBHOOKS. */
export async function createWebhook(db: Database, input: { url: string; events: AlertType[]; description: string | null }): Promise<WebhookRow | undefined> {
  return db.transaction(async (tx) => {
    // Serializes creations, so concurrent ones cannot pass the limit together.
    await tx.execute(sql`lock table webhooks in share row exclusive mode`)
    const [existing] = await tx.select({ n: count() }).from(webhooks)
    if ((existing?.n ?? 0) >= MAX_WEBHOOKS) return undefined
    const [row] = await tx
      .insert(webhooks)
      .values({ id: newId('wh'), url: input.url, events: input.events, description: input.description, secret: newWebhookSecret() })
      .returning()
    return row
  })
}

/** Every webhook, newest first (at most MAX_WEBHOOKS). */
export function listWebhooks(db: Database): Promise<WebhookRow[]> {
  return db.select().from(webhooks).orderBy(desc(webhooks.createdAt), desc(webhooks.id))
}

export async function findWebhook(db: Database, id: string): Promise<WebhookRow | undefined> {
  const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id))
  return row
}

/** Deletes a webhook and its deliveries, sent or not; false when there was none. */
export async function deleteWebhook(db: Database, id: string): Promise<boolean> {
  const deleted = await db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id })
  return deleted.length > 0
}

/** Stores a `webhook.test` event for this webhook alone; its id. */
export async function storeTestEvent(db: Database, webhookId: string, now: Date): Promise<string> {
  const { id } = await storeEvent(db, 'webhook.test', { webhook_id: webhookId }, now, webhookId)
  return id
}

/** A webhook's deliveries, newest first, `limit` after `after`, each with its position. */
export async function listDeliveries(
  db: Database,
  webhookId: string,
  limit: number,
  after: TimeAndId | undefined,
): Promise<{ row: DeliveryRow; position: TimeAndId }[]> {
  const rows = await db
    .select({ row: webhookDeliveries, createdAt: createdAtText(webhookDeliveries.createdAt) })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.webhookId, webhookId), olderThan(webhookDeliveries.createdAt, webhookDeliveries.eventId, after)))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.eventId))
    .limit(limit)
  return rows.map(({ row, createdAt }) => ({ row, position: { createdAt, id: row.eventId } }))
}
