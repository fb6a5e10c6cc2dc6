import type { GatewayError } from '../../errors/gateway-error'
import { upstreamErrorFrom } from '../../errors/upstream-client-error'

/** Google's envelope `{error: {code, message, status}}` (WIRE.md §6.1): the status, lower-cased, is the code. */
export function mapGeminiError(status: number, text: string): GatewayError {
  return upstreamErrorFrom(status, text, (body) => {
    const error = (body as { error?: { message?: string; status?: string } }).error
    return { code: error?.status?.toLowerCase(), message: error?.message }
  })
}
