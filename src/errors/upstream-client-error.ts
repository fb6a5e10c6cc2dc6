import { scrubCredentials } from '../util/scrub-credentials'
import { GatewayError } from './gateway-error'
import { UpstreamError } from './kinds'

/**
 * An upstream's own 4xx that is the client's fault (context too long, bad parameter): it
 * reaches the client with the upstream's status, message and code (docs/api.md#upstream-errors). The
 * upstream's words are scrubbed here, where every such error is made, because an upstream may
 * quote a credential (OpenAI's "Incorrect API key provided: sk-…" is a 401 from OpenAI itself
 * and a 400 behind some compatible servers).
 */
export class UpstreamClientError extends GatewayError {
  readonly type: string
  readonly code: string

  constructor(
    readonly status: number,
    code: string,
    message: string,
    options: { param?: string | null; cause?: unknown } = {},
  ) {
    super(scrubCredentials(message), { ...options, param: options.param ? scrubCredentials(options.param) : null })
    this.code = scrubCredentials(code)
    this.type = clientErrorType(status)
  }
}

/**
 * Whether an upstream's error status is the client's fault, to be shown to it as it is. 401 and
 * 403 mean the gateway's own provider credential is wrong; 408 and 429 are the upstream's load.
 */
export function isClientFault(status: number): boolean {
  return status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 408 && status !== 429
}

function clientErrorType(status: number): string {
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'permission_error'
  if (status === 404) return 'not_found_error'
  if (status === 413) return 'request_too_large'
  if (status === 429) return 'rate_limit_error'
  return 'invalid_request_error'
}

/** What a provider's error body says, read by its own map-error. */
export interface UpstreamErrorDetails {
  code?: string
  message?: string
  param?: string | null
}

/**
 * The gateway error for an upstream error response: the client's fault keeps the upstream's
 * status, message and code (docs/api.md#upstream-errors); anything else says the upstream failed, without
 * repeating the upstream's words (they may name keys). `read` knows the provider's envelope.
 */
export function upstreamErrorFrom(status: number, text: string, read: (body: unknown) => UpstreamErrorDetails | undefined): GatewayError {
  if (!isClientFault(status)) return new UpstreamError(`The upstream provider failed (HTTP ${status}).`, { cause: text, upstreamStatus: status })
  let details: UpstreamErrorDetails | undefined
  try {
    details = read(JSON.parse(text))
  } catch {
    details = undefined
  }
  return new UpstreamClientError(status, details?.code ?? 'upstream_error', details?.message ?? `The upstream refused the request (HTTP ${status}).`, {
    param: details?.param ?? null,
    cause: text,
  })
}
