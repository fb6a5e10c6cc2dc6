import { Elysia } from 'elysia'
import { coerceText } from '../../admin/coerce'
import { ADMIN_OPERATIONS } from '../../admin/operations'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'

export const ADMIN_PREFIX = '/admin/v1'

/** Every admin operation as a route; the admin token is checked by the gateway context. */
export function adminRoutes(context: GatewayContext, services: Services) {
  const app = new Elysia({ name: 'routes/admin' }).use(context)
  for (const operation of ADMIN_OPERATIONS) {
    app.route(
      operation.method,
      `${ADMIN_PREFIX}${operation.path}`,
      async ({ params, query, body, set }) => {
        const result = await operation.run(services, { params, query, body: (body ?? {}) as Record<string, unknown> })
        set.status = operation.status ?? 200
        return result
      },
      {
        // Query strings are text; numbers in them are converted before validation.
        transform: ({ query }) => {
          if (operation.query) Object.assign(query, coerceText(operation.query, query))
        },
        // The gateway's strict parser reads the body first; naming JSON here documents it.
        parse: 'json',
        params: operation.params,
        query: operation.query,
        body: operation.body,
        detail: { tags: ['Admin'], summary: operation.summary, security: [{ adminToken: [] }] },
      },
    )
  }
  return app
}
