import type { GatewayError } from '../../errors/gateway-error'
import { UpstreamError } from '../../errors/kinds'
import { isClientFault, UpstreamClientError } from '../../errors/upstream-client-error'
import type { ErrorBody } from './api'

/**
 * The upstream's client-fault 4xx keeps its status, message and code; anything else is the
 * upstream's failure and says so without repeating what the upstream said (it may name keys).
 * Authentication failures are ours (a wrong provider key), never the client's.
 */
export function mapOpenAiError(status: number, text: string): GatewayError {
  let body: ErrorBody | undefined
  try {
    body = JSON.parse(text) as ErrorBody
  } catch {
    body = undefined
  }
  if (isClientFault(status)) {
    const error = body?.error
    return new UpstreamClientError(status, error?.code ?? 'upstream_error', error?.message ?? `The upstream refused the request (HTTP ${status}).`, {
      param: error?.param ?? null,
      cause: text,
    })
  }
  return new UpstreamError(`The upstream provider failed (HTTP ${status}).`, { cause: text })
}
