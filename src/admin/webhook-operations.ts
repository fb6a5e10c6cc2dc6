import { Type } from '@sinclair/typebox'
import { ALERT_TYPES } from '../alerts/alert-types'
import {
  createWebhook,
  type DeliveryRow,
  deleteWebhook,
  findWebhook,
  listDeliveries,
  listWebhooks,
  MAX_WEBHOOKS,
  storeTestEvent,
  type WebhookRow,
} from '../alerts/webhooks'
import { InvalidRequestError, NotFoundError } from '../errors/kinds'
import type { Services } from '../services/services'
import { DEFAULT_PAGE_SIZE, decodeTimeAndId, PageQuery, pageOf, timeAndIdCursor } from './cursor'
import { idParam } from './id-param'
import { type AdminOperation, defineOperation } from './operation'

/** Alerts by webhook (docs/operations.md#alerts): the receivers, a test event, and each one's delivery log. */

const MAX_URL_LENGTH = 2048
const Id = idParam('webhook', 'wh')

/** The URL a webhook posts to: http or https, any host (the operator configures it, so no address is refused). */
function webhookUrl(text: string): string {
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new InvalidRequestError('url must be an absolute http or https URL.', { param: 'url' })
  }
  return text
}

async function requireWebhook(services: Pick<Services, 'db'>, id: string): Promise<WebhookRow> {
  const row = await findWebhook(services.db, id)
  if (!row) throw new NotFoundError(`No webhook '${id}'.`)
  return row
}

/** A webhook as the API shows it: never its secret, which only its creation answers. */
function webhookView(row: WebhookRow) {
  return { id: row.id, url: row.url, events: row.events, description: row.description, created_at: row.createdAt.toISOString() }
}

function deliveryView(row: DeliveryRow) {
  return {
    id: row.eventId,
    type: row.type,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    delivered_at: row.deliveredAt?.toISOString() ?? null,
  }
}

export const WEBHOOK_OPERATIONS: readonly AdminOperation[] = [
  defineOperation({
    command: ['webhooks', 'create'],
    method: 'POST',
    path: '/webhooks',
    summary: 'Add a webhook that receives alerts; the answer is the only place its signing secret ever appears',
    body: Type.Object({
      url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'http or https' }),
      events: Type.Optional(
        Type.Array(Type.Union(ALERT_TYPES.map((type) => Type.Literal(type))), {
          minItems: 1,
          uniqueItems: true,
          description: `A subset of ${ALERT_TYPES.join(', ')}; all unless given.`,
        }),
      ),
      description: Type.Optional(Type.String({ maxLength: 500 })),
    }),
    status: 201,
    run: async (services, { body }) => {
      const row = await createWebhook(services.db, {
        url: webhookUrl(body.url),
        events: body.events ?? [...ALERT_TYPES],
        description: body.description ?? null,
      })
      if (!row) throw new InvalidRequestError(`The gateway already has ${MAX_WEBHOOKS} webhooks: delete one first.`, { param: 'url' })
      return { ...webhookView(row), secret: row.secret }
    },
  }),
  defineOperation({
    command: ['webhooks', 'list'],
    method: 'GET',
    path: '/webhooks',
    summary: 'Every webhook, newest first, never their secrets',
    run: async (services) => ({ object: 'list' as const, data: (await listWebhooks(services.db)).map(webhookView) }),
  }),
  defineOperation({
    command: ['webhooks', 'delete'],
    method: 'DELETE',
    path: '/webhooks/:id',
    summary: 'Delete a webhook and its delivery log; what it had not been sent yet is dropped',
    params: Id,
    run: async (services, { params }) => {
      if (!(await deleteWebhook(services.db, params.id))) throw new NotFoundError(`No webhook '${params.id}'.`)
      return { id: params.id, deleted: true }
    },
  }),
  defineOperation({
    command: ['webhooks', 'test'],
    method: 'POST',
    path: '/webhooks/:id/test',
    summary: 'Send the webhook a webhook.test event (within a few seconds; see its deliveries)',
    params: Id,
    run: async (services, { params }) => {
      await requireWebhook(services, params.id)
      const id = await storeTestEvent(services.db, params.id, new Date(services.now()))
      return { id, type: 'webhook.test' as const, status: 'pending' as const }
    },
  }),
  defineOperation({
    command: ['webhooks', 'deliveries'],
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    summary: "A webhook's deliveries, newest first, a page at a time",
    params: Id,
    query: Type.Object(PageQuery),
    run: async (services, { params, query }) => {
      await requireWebhook(services, params.id)
      const limit = query.limit ?? DEFAULT_PAGE_SIZE
      const rows = await listDeliveries(services.db, params.id, limit + 1, decodeTimeAndId('deliveries', query.cursor))
      return pageOf(
        rows,
        limit,
        (row) => deliveryView(row.row),
        (row) => timeAndIdCursor('deliveries', row.position),
      )
    },
  }),
]
