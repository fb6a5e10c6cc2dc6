import { Elysia } from 'elysia'
import { checkMetricsToken } from '../auth/metrics-token'
import { EXPOSITION_CONTENT_TYPE } from '../observability/metric-registry'
import { holdClosingsPending, holdsOpen, renderMetrics, startEventLoopProbe } from '../observability/metrics'
import type { Services } from '../services'

/**
 * GET /metrics, Prometheus text format (docs/operations.md#metrics), for a Bearer token equal to
 * TOLLGATE_METRICS_TOKEN or TOLLGATE_ADMIN_TOKEN. Without either variable the endpoint is not
 * registered, like the admin API: every method on /metrics is the router's plain 404.
 */
export function metricsEndpoint(services: Services) {
  const { metricsToken, adminToken } = services.config
  if (!metricsToken && !adminToken) return new Elysia({ name: 'endpoints/metrics-disabled' })
  startEventLoopProbe()
  return new Elysia({ name: 'endpoints/metrics' }).get(
    '/metrics',
    ({ request }) => {
      checkMetricsToken([metricsToken, adminToken], request.headers)
      // Read from this app's hold book at scrape time: the book is the one record of open calls.
      holdsOpen.set({}, services.holds.openHoldCount())
      holdClosingsPending.set({}, services.holds.pendingClosingCount())
      return new Response(renderMetrics(), { headers: { 'content-type': EXPOSITION_CONTENT_TYPE } })
    },
    // Documented in docs/operations.md#metrics; the API reference is for clients of the gateway.
    { detail: { hide: true } },
  )
}
