import { Value } from '@sinclair/typebox/value'
import type { GatewayError } from '../../errors/gateway-error'
import { upstreamErrorFrom } from '../../errors/upstream-client-error'
import { ErrorBody } from './api'

/**
 * OpenAI's envelope `{error: {message, type, param, code}}`
 * (https://platform.openai.com/docs/guides/error-codes). Only a string is a code: compatible
 * servers (vLLM) put the HTTP status there as a number.
 */
export function mapOpenAiError(status: number, text: string): GatewayError {
  return upstreamErrorFrom(status, text, (body) => {
    if (!Value.Check(ErrorBody, body)) return undefined
    const { code, message, param } = body.error
    return {
      code: typeof code === 'string' ? code : undefined,
      message: typeof message === 'string' ? message : undefined,
      param: typeof param === 'string' ? param : null,
    }
  })
}
