import { Elysia } from 'elysia'
import { checkMonthlyQuota } from '../billing/quota'
import { resolveModel } from '../catalog/resolve-model'
import { NoRouteAvailableError } from '../errors/kinds'
import type { GatewayContext } from '../http/gateway-context'
import type { Services } from '../services'

/**
 * Billable endpoints whose upstream side is not built yet. They are routed, so credentials,
 * model access and the monthly quota are checked exactly as for the finished endpoint, and
 * then the call is refused with 503 in the route's own envelope. Each line goes when its
 * endpoint lands.
 */
const PENDING = [
  '/v1/responses',
] as const

export function pendingRoutes(context: GatewayContext, services: Services) {
  const app = new Elysia({ name: 'routes/pending' }).use(context)
  for (const path of PENDING) {
    app.post(
      path,
      async ({ caller, body }) => {
        const model = typeof body === 'object' && body !== null && 'model' in body ? body.model : undefined
        if (typeof model === 'string') await resolveModel(services, caller, model)
        if (caller.kind === 'api-key') await checkMonthlyQuota(services.db, caller.key, services.now())
        throw new NoRouteAvailableError(`${path} is not served by this version of the gateway yet.`)
      },
      { detail: { tags: ['Pending'], summary: `${path} (not yet served)` } },
    )
  }
  return app
}
