import { Elysia } from 'elysia'
import { checkMetricsToken } from '../auth/metrics-token'
import { EXPOSITION_CONTENT_TYPE } from '../observability/metric-registry'
import { holdClosingsPending, holdsOpen, renderMetrics, routesCoolingDown, startEventLoopProbe } from '../observability/metrics'
import { mergeExpositions } from '../observability/metrics-merge'
import type { Services } from '../services/services'

/** How a worker reaches the other workers' metrics (lifecycle/worker-link.ts). */
export interface PeerMetrics {
  gather(deadlineMs: number): Promise<{ texts: string[]; workers: number } | undefined>
}

/** A scrape waits this long for the other workers; the primary gives them a little less. */
const GATHER_DEADLINE_MS = 1500

let peers: PeerMetrics | undefined

/** Makes every scrape of this process describe the whole instance: set in each worker of `serve --workers N`. */
export function usePeerMetrics(source: PeerMetrics): void {
  peers = source
}

/**
 * This process's metrics, with the hold book and the route cooldowns read at scrape time: the
 * book is the one record of open calls, and a cooldown ends when its time is up, not on an event.
 */
export function localMetrics(services: Pick<Services, 'holds' | 'routeCooldowns'>): string {
  holdsOpen.set({}, services.holds.openHoldCount())
  holdClosingsPending.set({}, services.holds.pendingClosingCount())
  routesCoolingDown.set({}, services.routeCooldowns.coolingCount())
  return renderMetrics()
}

/**
 * GET /metrics, Prometheus text format (docs/operations.md#metrics), for a Bearer token equal to
 * TOLLGATE_METRICS_TOKEN or TOLLGATE_ADMIN_TOKEN. Without either variable the endpoint is not
 * registered, like the admin API: every method on /metrics is the router's plain 404.
 */
export function metricsEndpoint(services: Pick<Services, 'config' | 'holds' | 'routeCooldowns'>) {
  const { metricsToken, adminToken } = services.config
  if (!metricsToken && !adminToken) return new Elysia({ name: 'endpoints/metrics-disabled' })
  startEventLoopProbe()
  return new Elysia({ name: 'endpoints/metrics' }).get(
    '/metrics',
    async ({ request }) => {
      checkMetricsToken([metricsToken, adminToken], request.headers)
      const local = localMetrics(services)
      const body = peers ? instanceMetrics(local, await peers.gather(GATHER_DEADLINE_MS)) : local
      return new Response(body, { headers: { 'content-type': EXPOSITION_CONTENT_TYPE } })
    },
    // Documented in docs/operations.md#metrics; the API reference is for clients of the gateway.
    { detail: { hide: true } },
  )
}

/**
 * This worker's metrics merged with those of the others that answered in time. Two gauges say
 * how complete the sum is: a worker that did not answer is left out, visibly.
 */
function instanceMetrics(local: string, others: { texts: string[]; workers: number } | undefined): string {
  const texts = [local, ...(others?.texts ?? [])]
  return `${mergeExpositions(texts)}${[
    '# HELP tollgate_workers Worker processes this instance runs (serve --workers).',
    '# TYPE tollgate_workers gauge',
    `tollgate_workers ${others?.workers ?? 0}`,
    '# HELP tollgate_workers_reporting Workers whose metrics this scrape includes: fewer than tollgate_workers when some did not answer in time.',
    '# TYPE tollgate_workers_reporting gauge',
    `tollgate_workers_reporting ${texts.length}`,
  ].join('\n')}\n`
}
