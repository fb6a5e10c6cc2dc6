import type { HoldBook } from '../billing/hold-book'
import type { Config } from '../config/config'
import { logEvent } from '../observability/log'
import type { Readiness } from './readiness'

/** What shutdown needs of Bun's server. */
export interface Listener {
  /** Stops accepting; resolves once every connection is closed. `true` cuts requests in flight. */
  stop(closeActiveConnections?: boolean): Promise<void>
  readonly pendingRequests: number
}

/** Settlements still being retried at exit get this long to land (the sweep releases what does not). */
const SETTLEMENT_DRAIN_MS = 10_000

/**
 * A graceful stop in phases, each logged (docs/operations.md#shutdown): readiness turns 503 while
 * the listener serves on for `drainMs`, so load balancers take the instance out before it stops
 * answering; then the listener closes and requests and streams in flight get `shutdownTimeoutMs`
 * to finish (those still running are then cut: a cut stream settles what it consumed, as when
 * its client leaves); then settlements still being retried get their last chance to land.
 */
export async function drainAndStop(
  signal: string,
  listener: Listener,
  services: { readonly readiness: Readiness; readonly holds: Pick<HoldBook, 'drain'> },
  config: Pick<Config, 'drainMs' | 'shutdownTimeoutMs'>,
): Promise<void> {
  services.readiness.startDraining()
  logEvent('info', 'draining: /v1/readyz answers 503, requests are still served', {
    signal,
    drain_seconds: config.drainMs / 1000,
    shutdown_timeout_seconds: config.shutdownTimeoutMs / 1000,
  })
  await Bun.sleep(config.drainMs)
  const closed = listener.stop(false)
  logEvent('info', 'listener closed: no new connections, waiting for requests in flight', { in_flight: listener.pendingRequests })
  const finished = await Promise.race([closed.then(() => true), Bun.sleep(config.shutdownTimeoutMs).then(() => false)])
  if (finished) {
    logEvent('info', 'requests in flight done')
  } else {
    logEvent('warn', 'shutdown timeout: cutting the requests still in flight', {
      in_flight: listener.pendingRequests,
      shutdown_timeout_seconds: config.shutdownTimeoutMs / 1000,
    })
    await listener.stop(true)
    // A cut stream starts its settlement from its cancel callback: let those callbacks run first.
    await Bun.sleep(0)
  }
  const settled = await services.holds.drain(SETTLEMENT_DRAIN_MS)
  if (!settled) logEvent('warn', 'settlements still unwritten at exit: the sweep releases their holds once they lapse')
}
