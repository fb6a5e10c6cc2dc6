import type { GatewayError } from '../../errors/gateway-error'
import { UpstreamError } from '../../errors/kinds'
import { isClientFault, UpstreamClientError } from '../../errors/upstream-client-error'

/**
 * Google's error envelope `{error: {code, message, status}}`: INVALID_ARGUMENT, NOT_FOUND and
 * FAILED_PRECONDITION are the client's (status kept, Google's status as the code); 401/403 mean
 * the gateway's key is wrong, 429 and 5xx are the upstream's trouble.
 */
export function mapGeminiError(status: number, text: string): GatewayError {
  let error: { message?: string; status?: string } | undefined
  try {
    error = (JSON.parse(text) as { error?: { message?: string; status?: string } }).error
  } catch {
    error = undefined
  }
  if (isClientFault(status)) {
    return new UpstreamClientError(status, (error?.status ?? 'upstream_error').toLowerCase(), error?.message ?? `The upstream refused the request (HTTP ${status}).`, { cause: text })
  }
  return new UpstreamError(`The upstream provider failed (HTTP ${status}).`, { cause: text })
}
