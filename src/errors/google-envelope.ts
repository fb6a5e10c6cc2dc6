import type { GatewayError } from './gateway-error'

/**
 * Google's error envelope (https://cloud.google.com/apis/design/errors#error_model), as the Gemini
 * API surface writes it (docs/api.md#gemini-api): the HTTP status, the message, the canonical
 * status word, and the gateway's own code as the reason of an ErrorInfo detail, so a client can
 * tell `insufficient_balance` from `rate_limit_exceeded` although both are RESOURCE_EXHAUSTED.
 */
export function googleErrorBody(error: GatewayError): object {
  return {
    error: {
      code: error.status,
      message: error.message,
      status: googleStatusOf(error.status),
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: error.code, domain: 'tollgate' }],
    },
  }
}

const STATUS_WORDS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'RESOURCE_EXHAUSTED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  422: 'FAILED_PRECONDITION',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  502: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

/** The google.rpc.Code name of an HTTP status; one no mapping names is UNKNOWN. */
export function googleStatusOf(status: number): string {
  return STATUS_WORDS[status] ?? 'UNKNOWN'
}
