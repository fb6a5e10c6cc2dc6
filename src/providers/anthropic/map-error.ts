import type { GatewayError } from '../../errors/gateway-error'
import { UpstreamError } from '../../errors/kinds'
import { isClientFault, UpstreamClientError } from '../../errors/upstream-client-error'
import type { ErrorBody } from './api'

/**
 * Anthropic's client-fault 4xx keeps its status, message and error type (as the code); 401 and
 * 403 mean the gateway's own key is wrong, 429, 5xx and 529 (overloaded) are the upstream's
 * trouble: those say so without repeating the upstream's words.
 */
export function mapAnthropicError(status: number, text: string): GatewayError {
  let body: ErrorBody | undefined
  try {
    body = JSON.parse(text) as ErrorBody
  } catch {
    body = undefined
  }
  if (isClientFault(status)) {
    return new UpstreamClientError(status, body?.error?.type ?? 'upstream_error', body?.error?.message ?? `The upstream refused the request (HTTP ${status}).`, { cause: text })
  }
  return new UpstreamError(`The upstream provider failed (HTTP ${status}).`, { cause: text })
}
