import type { GatewayError } from '../../errors/gateway-error'
import { upstreamErrorFrom } from '../../errors/upstream-client-error'
import type { ErrorBody } from './api'

/** OpenAI's envelope `{error: {message, type, param, code}}` (WIRE.md §2.3). */
export function mapOpenAiError(status: number, text: string): GatewayError {
  return upstreamErrorFrom(status, text, (body) => {
    const error = (body as ErrorBody).error
    return { code: error?.code ?? undefined, message: error?.message, param: error?.param }
  })
}
