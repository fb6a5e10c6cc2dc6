import { logEvent } from '../observability/log'
import type { ProviderConfig } from '../providers/provider-config'
import { retryAfterMs } from '../upstream-http/retry-after'

/** Failures in a row that start a route's cooldown. */
export const FAILURES_TO_COOL = 3

/** What the cooldowns need of a route: which upstream it calls, and its provider's setting. */
export interface CooledRoute {
  provider: Pick<ProviderConfig, 'name' | 'cooldownSeconds'>
  upstreamModel: string
}

/**
 * Why an upstream call counts against its route: a 5xx or 429 answer (`status`), no answer within
 * the provider's timeout (an upstream's 408 too), or no connection. A 429's `Retry-After`, when
 * it asked for a wait, is `retryAfterMs`.
 */
export type RouteFailure = { kind: 'status'; status: number; retryAfterMs?: number } | { kind: 'timeout' } | { kind: 'unreachable' }

interface RouteHealth {
  provider: string
  upstreamModel: string
  /** Failures in a row; it stays at the threshold after a cooldown, so a failed trial cools the route again at once. */
  failures: number
  /** While cooling: when the cooldown ends (the services clock). */
  coolingUntil: number | undefined
  /** Ends the cooldown on time in real time, for the log line; unref'd. */
  timer: ReturnType<typeof setTimeout> | undefined
}

/**
 * Which routes are cooling down (docs/configuration.md#route-cooldown): a route that failed
 * FAILURES_TO_COOL times in a row is skipped for its provider's `cooldownSeconds` (or a 429's
 * `Retry-After`) while the call has a route that is not cooling; then it is tried again, and one
 * success clears it. State of this process only: each worker and each instance learns on its
 * own. Only routes with failures have an entry, and a reload drops those no longer in the
 * catalogue (`retain`), so the map never outgrows the catalogue's routes.
 */
export class RouteCooldowns {
  private readonly routes = new Map<string, RouteHealth>()

  constructor(private readonly now: () => number) {}

  /**
   * The routes to try, in order: those not cooling down, or all of them when every one is (a
   * route that may be dead beats answering 503 without trying).
   */
  usable<R extends CooledRoute>(routes: [R, ...R[]]): [R, ...R[]] {
    const [first, ...rest] = routes.filter((route) => !this.isCooling(route))
    return first === undefined ? routes : [first, ...rest]
  }

  /**
   * The route answered with `status`: a success clears its count; a 5xx, a 429 (its
   * `Retry-After` read) or a 408 (the upstream's own timeout) counts against it. Any other
   * status (the client's fault, or the gateway's provider key refused) says nothing of its health.
   */
  answered(route: CooledRoute, status: number, headers: Headers): void {
    if (status >= 200 && status < 300) this.succeeded(route)
    else if (status === 408) this.failed(route, { kind: 'timeout' })
    else if (status === 429) this.failed(route, { kind: 'status', status, retryAfterMs: retryAfterMs(headers.get('retry-after'), this.now()) })
    else if (status >= 500) this.failed(route, { kind: 'status', status })
  }

  /** The route answered: its count is cleared (and a cooldown it was in, when every route was tried, ends). */
  succeeded(route: CooledRoute): void {
    const key = keyOf(route)
    const health = this.routes.get(key)
    if (!health) return
    if (health.coolingUntil !== undefined) this.endCooling(health, 'success')
    this.routes.delete(key)
  }

  /** The route failed: a third failure in a row (or a failed trial) starts its cooldown; one while cooling prolongs it. */
  failed(route: CooledRoute, failure: RouteFailure): void {
    const seconds = route.provider.cooldownSeconds
    const key = keyOf(route)
    if (seconds <= 0) {
      // A reload set 0 while the route was cooling: the cooldown it had ends now.
      const disabled = this.routes.get(key)
      if (disabled?.coolingUntil !== undefined) this.endCooling(disabled, 'disabled')
      this.routes.delete(key)
      return
    }
    const health = this.routes.get(key) ?? {
      provider: route.provider.name,
      upstreamModel: route.upstreamModel,
      failures: 0,
      coolingUntil: undefined,
      timer: undefined,
    }
    this.routes.set(key, health)
    health.failures = Math.min(health.failures + 1, FAILURES_TO_COOL)
    if (health.failures < FAILURES_TO_COOL) return
    const lengthMs = (failure.kind === 'status' && failure.status === 429 ? failure.retryAfterMs : undefined) ?? seconds * 1000
    const until = this.now() + lengthMs
    const started = health.coolingUntil === undefined
    health.coolingUntil = Math.max(health.coolingUntil ?? 0, until)
    this.scheduleEnd(health)
    if (started)
      logEvent('warn', 'route cooling down', {
        provider: health.provider,
        upstream_model: health.upstreamModel,
        cooldown_seconds: lengthMs / 1000,
        reason: reasonOf(failure),
      })
  }

  /**
   * What this process knows of one route, for the admin API: its failures in a row and, while
   * it cools down, when that ends (the services clock, milliseconds).
   */
  stateOf(route: CooledRoute): { failures: number; coolingUntil: number | undefined } {
    const health = this.routes.get(keyOf(route))
    if (!health) return { failures: 0, coolingUntil: undefined }
    return { failures: health.failures, coolingUntil: this.stillCooling(health) ? health.coolingUntil : undefined }
  }

  /** Routes cooling down now: the `tollgate_routes_cooling_down` gauge. */
  coolingCount(): number {
    let count = 0
    for (const health of this.routes.values()) if (this.stillCooling(health)) count++
    return count
  }

  /** Forgets every route but the catalogue's `routes` (after a reload), so removed routes leave no entry behind. */
  retain(routes: Iterable<{ provider: string; model: string }>): void {
    const kept = new Set<string>()
    for (const route of routes) kept.add(`${route.provider}\u0000${route.model}`)
    for (const [key, health] of this.routes) {
      if (kept.has(key)) continue
      clearTimeout(health.timer)
      this.routes.delete(key)
    }
  }

  /** Stops the timers (the services are closing). */
  close(): void {
    for (const health of this.routes.values()) clearTimeout(health.timer)
  }

  private isCooling(route: CooledRoute): boolean {
    const health = this.routes.get(keyOf(route))
    return health !== undefined && this.stillCooling(health)
  }

  /** Whether the route is cooling; a cooldown found over ends here (logged once). */
  private stillCooling(health: RouteHealth): boolean {
    if (health.coolingUntil === undefined) return false
    if (this.now() < health.coolingUntil) return true
    this.endCooling(health, 'elapsed')
    return false
  }

  private endCooling(health: RouteHealth, reason: 'elapsed' | 'success' | 'disabled'): void {
    clearTimeout(health.timer)
    health.timer = undefined
    health.coolingUntil = undefined
    logEvent('info', 'route cooldown ended', { provider: health.provider, upstream_model: health.upstreamModel, reason })
  }

  /** The end is also noticed without traffic, so its log line comes on time. */
  private scheduleEnd(health: RouteHealth): void {
    clearTimeout(health.timer)
    const until = health.coolingUntil
    if (until === undefined) return
    health.timer = setTimeout(() => this.stillCooling(health), Math.max(0, until - this.now()) + 1)
    health.timer.unref()
  }
}

function keyOf(route: CooledRoute): string {
  return `${route.provider.name}\u0000${route.upstreamModel}`
}

function reasonOf(failure: RouteFailure): string {
  return failure.kind === 'status' ? `http_${failure.status}` : failure.kind
}
