import { Value } from '@sinclair/typebox/value'
import type { GatewayError } from '../../errors/gateway-error'
import { upstreamErrorFrom } from '../../errors/upstream-client-error'
import { ErrorBody } from './api'

/**
 * Google's envelope `{error: {code, message, status}}` (https://ai.google.dev/gemini-api/docs/troubleshooting):
 * the status, lower-cased, is the code.
 */
export function mapGeminiError(status: number, text: string): GatewayError {
  return upstreamErrorFrom(status, text, (body) => {
    if (!Value.Check(ErrorBody, body)) return undefined
    const { status: name, message } = body.error
    return { code: typeof name === 'string' ? name.toLowerCase() : undefined, message: typeof message === 'string' ? message : undefined }
  })
}
