import { sql } from 'drizzle-orm'
import type { Database } from '../db/database'
import { queryRows } from '../db/rows'
import type { DeliveryStatus } from '../db/schema'

/** A delivery one instance claimed, with what sending it needs. */
export interface ClaimedDelivery {
  webhookId: string
  eventId: string
  body: string
  /** Counting this one. */
  attempts: number
  url: string
  secret: string
  claimToken: string
}

/**
 * Claims up to `limit` due deliveries for this instance until `claimedUntil`: rows another
 * instance is claiming at the same moment are skipped (`for update skip locked`), and rows
 * claimed earlier are taken only once that claim has run out (its instance crashed or hung).
 * The attempt is counted at the claim: an attempt whose outcome was lost still counts.
 */
export async function claimDueDeliveries(db: Database, limit: number, now: Date, claimedUntil: Date, claimToken: string): Promise<ClaimedDelivery[]> {
  const at = now.toISOString()
  const rows = await queryRows<{ webhook_id: string; event_id: string; body: string; attempts: number; url: string; secret: string }>(
    db,
    sql`with due as (
        select webhook_id, event_id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ${at}::timestamptz and (claimed_until is null or claimed_until < ${at}::timestamptz)
        order by next_attempt_at
        limit ${limit}
        for update skip locked
      ),
      claimed as (
        update webhook_deliveries d set claim_token = ${claimToken}, claimed_until = ${claimedUntil.toISOString()}::timestamptz, attempts = d.attempts + 1
        from due where d.webhook_id = due.webhook_id and d.event_id = due.event_id
        returning d.webhook_id, d.event_id, d.body, d.attempts
      )
      select c.webhook_id, c.event_id, c.body, c.attempts, w.url, w.secret from claimed c join webhooks w on w.id = c.webhook_id`,
  )
  return rows.map((row) => ({
    webhookId: row.webhook_id,
    eventId: row.event_id,
    body: row.body,
    attempts: Number(row.attempts),
    url: row.url,
    secret: row.secret,
    claimToken,
  }))
}

/** What one attempt came to. */
export interface AttemptOutcome {
  status: DeliveryStatus
  statusCode: number | null
  error: string | null
  /** For a delivery still pending: when it is tried again. */
  nextAttemptAt: Date | null
}

/** Records an attempt's outcome and ends the claim, if the claim is still this instance's (a claim that ran out may have been taken over). */
export async function recordAttempt(db: Database, delivery: ClaimedDelivery, outcome: AttemptOutcome, now: Date): Promise<void> {
  await queryRows(
    db,
    sql`update webhook_deliveries set status = ${outcome.status}, last_status_code = ${outcome.statusCode}, last_error = ${outcome.error},
        next_attempt_at = coalesce(${outcome.nextAttemptAt?.toISOString() ?? null}::timestamptz, next_attempt_at),
        delivered_at = ${outcome.status === 'delivered' ? now.toISOString() : null}::timestamptz,
        claim_token = null, claimed_until = null
      where webhook_id = ${delivery.webhookId} and event_id = ${delivery.eventId} and claim_token = ${delivery.claimToken}`,
  )
}

/**
 * Deletes up to `limit` finished deliveries (delivered or failed) created before `before`; how
 * many it deleted. Rows another instance is deleting at the same moment are skipped.
 */
export async function deleteFinishedDeliveries(db: Database, before: Date, limit: number): Promise<number> {
  const rows = await queryRows<{ event_id: string }>(
    db,
    sql`with old as (
        select webhook_id, event_id from webhook_deliveries
        where status in ('delivered', 'failed') and created_at < ${before.toISOString()}::timestamptz
        limit ${limit}
        for update skip locked
      )
      delete from webhook_deliveries d using old where d.webhook_id = old.webhook_id and d.event_id = old.event_id
      returning d.event_id`,
  )
  return rows.length
}
