import { createHmac, randomBytes } from 'node:crypto'

/**
 * Webhook secrets and signatures in the Standard Webhooks format (docs/operations.md#verifying-signatures):
 * a secret is `whsec_` + base64 of 32 random bytes, and a signature is `v1,` + base64 of the
 * HMAC-SHA256, keyed with the secret's decoded bytes, of `{webhook-id}.{webhook-timestamp}.{body}`.
 */

const SECRET_PREFIX = 'whsec_'

/** A new webhook secret. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

/** The `webhook-signature` header of one attempt. */
export function signDelivery(secret: string, eventId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  const digest = createHmac('sha256', key).update(`${eventId}.${timestampSeconds}.${body}`).digest('base64')
  return `v1,${digest}`
}
