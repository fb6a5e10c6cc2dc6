import type { GatewayError } from '../../errors/gateway-error'
import { upstreamErrorFrom } from '../../errors/upstream-client-error'
import type { ErrorBody } from './api'

/**
 * Anthropic's envelope `{type: "error", error: {type, message}}` (WIRE.md §5.4). Its `type` is a
 * class of error that follows from the status (the client sees it again as the error's type),
 * not a code: with no `code` of its own, as Anthropic's API never sends one, the gateway's
 * `upstream_error` stands. A `code` is kept when an upstream does send one.
 */
export function mapAnthropicError(status: number, text: string): GatewayError {
  return upstreamErrorFrom(status, text, (body) => {
    const error = (body as ErrorBody).error
    return { code: typeof error?.code === 'string' ? error.code : undefined, message: error?.message }
  })
}
