import { Elysia } from 'elysia'
import { coerceText } from '../../admin/coerce'
import { ADMIN_OPERATIONS } from '../../admin/operations'
import { InvalidRequestError, NotFoundError } from '../../errors/kinds'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'
import { findUnstorableText } from '../../util/storable-text'

export const ADMIN_PREFIX = '/admin/v1'

/** Every admin operation as a route; the admin token is checked by the gateway context. */
export function adminRoutes(context: GatewayContext, services: Services) {
  const app = new Elysia({ name: 'routes/admin' }).use(context)
  for (const operation of ADMIN_OPERATIONS) {
    app.route(
      operation.method,
      `${ADMIN_PREFIX}${operation.path}`,
      async ({ params, query, body, set }) => {
        refuseUnstorableText(params, query, body)
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

/**
 * Every admin operation reads or writes the database with what it was given, and Postgres text
 * cannot hold a NUL character (util/storable-text.ts). A path id with one names nothing that
 * can exist: 404, as for any unknown id. A query or body field with one is a 400 naming it.
 */
function refuseUnstorableText(params: unknown, query: unknown, body: unknown): void {
  if (findUnstorableText(params) !== undefined) throw new NotFoundError('Not found.')
  for (const [where, value] of [[' in the query', query], ['', body]] as const) {
    const param = findUnstorableText(value)
    if (param !== undefined) {
      throw new InvalidRequestError(`Invalid value for '${param}'${where}: text cannot contain the NUL character.`, { param })
    }
  }
}
