import type { GatewayError } from '../../errors/gateway-error'
import { upstreamErrorFrom } from '../../errors/upstream-client-error'
import type { ErrorBody } from './api'

/** Anthropic's envelope `{type: "error", error: {type, message}}` (WIRE.md §5.4): the error type is the code. */
export function mapAnthropicError(status: number, text: string): GatewayError {
  return upstreamErrorFrom(status, text, (body) => {
    const error = (body as ErrorBody).error
    return { code: error?.type, message: error?.message }
  })
}
