import type { ModelEntry } from '../catalog/catalog-schema'
import type { GatewayError } from '../errors/gateway-error'
import { StreamIdleTimeoutError, UpstreamError } from '../errors/kinds'
import type { Usage, UsageSource } from '../spec/usage'
import type { BilledCall } from './billed-call'

/** What a relay has counted so far: the provider's usage when it reported one, else its own. */
export interface StreamedSoFar {
  usage: Usage
  source: UsageSource
}

/**
 * Closes the books of a stream that stopped before its end, for every relay alike, and returns
 * the error its client is told in the surface's own format. A stream the gateway stopped for
 * silence (http/idle-timeout.ts) is settled for what was streamed, like one the client
 * abandons: the upstream worked until then. A stream the upstream broke is an upstream failure,
 * released unbilled.
 */
export async function closeUnfinishedStream(
  params: { call: BilledCall; model: ModelEntry; route: string },
  cause: unknown,
  soFar: () => StreamedSoFar,
): Promise<GatewayError> {
  if (cause instanceof StreamIdleTimeoutError) {
    const { usage, source } = soFar()
    await params.call.settle(params.model, params.route, usage, source)
    return cause
  }
  await params.call.release()
  return new UpstreamError('The upstream stream failed before it completed.', { cause })
}
