import { Value } from '@sinclair/typebox/value'
import type { GatewayError } from '../../errors/gateway-error'
import { upstreamErrorFrom } from '../../errors/upstream-client-error'
import { ErrorBody } from '../../wire/messages/message'

/**
 * Anthropic's envelope `{type: "error", error: {type, message}}` (https://docs.claude.com/en/api/errors).
 * Its `type` is a class of error that follows from the status (the client sees it again as the
 * error's type), not a code: with no `code` of its own, as Anthropic's API never sends one, the
 * gateway's `upstream_error` stands. A `code` is kept when an upstream does send one.
 */
export function mapAnthropicError(status: number, text: string): GatewayError {
  return upstreamErrorFrom(status, text, (body) => {
    if (!Value.Check(ErrorBody, body)) return undefined
    const { code, message } = body.error
    return { code: typeof code === 'string' ? code : undefined, message: typeof message === 'string' ? message : undefined }
  })
}
