import type { GatewayError } from '../../errors/gateway-error'
import { upstreamErrorFrom } from '../../errors/upstream-client-error'
import type { ErrorBody } from './api'

/**
 * OpenAI's envelope `{error: {message, type, param, code}}` (WIRE.md §2.3). Only a string is a
 * code: compatible servers (vLLM) put the HTTP status there as a number.
 */
export function mapOpenAiError(status: number, text: string): GatewayError {
  return upstreamErrorFrom(status, text, (body) => {
    const error = (body as ErrorBody).error
    return { code: typeof error?.code === 'string' ? error.code : undefined, message: error?.message, param: error?.param }
  })
}
