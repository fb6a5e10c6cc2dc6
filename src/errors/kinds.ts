import { GatewayError } from './gateway-error'

export class InvalidRequestError extends GatewayError {
  readonly status = 400
  readonly code = 'invalid_request'
  readonly type = 'invalid_request_error'
}

export class ModelNotSupportedError extends GatewayError {
  readonly status = 400
  readonly code = 'model_not_supported'
  readonly type = 'invalid_request_error'
}

/** The provider's safety filters withheld the result (docs/billing.md#release): not billed. */
export class ContentPolicyError extends GatewayError {
  readonly status = 400
  readonly code = 'content_policy_violation'
  readonly type = 'invalid_request_error'
}

export class InvalidApiKeyError extends GatewayError {
  readonly status = 401
  readonly code = 'invalid_api_key'
  readonly type = 'authentication_error'
}

export class InvalidTokenError extends GatewayError {
  readonly status = 401
  readonly code = 'invalid_token'
  readonly type = 'authentication_error'
}

/** A user token without the inference scope. */
export class TokenScopeError extends GatewayError {
  readonly status = 401
  readonly code = 'insufficient_scope'
  readonly type = 'authentication_error'
}

/** An API key whose explicit scopes exclude the endpoint. */
export class KeyScopeError extends GatewayError {
  readonly status = 403
  readonly code = 'insufficient_scope'
  readonly type = 'permission_error'
}

export class InsufficientBalanceError extends GatewayError {
  readonly status = 402
  readonly code = 'insufficient_balance'
  readonly type = 'billing_error'
}

export class ModelNotAllowedError extends GatewayError {
  readonly status = 403
  readonly code = 'model_not_allowed'
  readonly type = 'permission_error'
}

/** A hold would pass one of the API key's spend limits by period (docs/billing.md#spend-limits-by-period). */
export class QuotaExceededError extends GatewayError {
  readonly status = 403
  readonly code = 'api_key_quota_exceeded'
  readonly type = 'permission_error'
}

/** A hold would pass one of the user's spend limits by period, their own or the default (docs/billing.md#spend-limits-by-period). */
export class UserQuotaExceededError extends GatewayError {
  readonly status = 403
  readonly code = 'user_quota_exceeded'
  readonly type = 'permission_error'
}

export class NotFoundError extends GatewayError {
  readonly status = 404
  readonly code = 'not_found'
  readonly type = 'not_found_error'
}

export class ModelNotFoundError extends GatewayError {
  readonly status = 404
  readonly code = 'model_not_found'
  readonly type = 'not_found_error'
}

export class MethodNotAllowedError extends GatewayError {
  readonly status = 405
  readonly code = 'method_not_allowed'
  readonly type = 'invalid_request_error'
}

/** The same idempotency key was sent again with different content. */
export class IdempotencyConflictError extends GatewayError {
  readonly status = 409
  readonly code = 'idempotency_conflict'
  readonly type = 'invalid_request_error'
}

/**
 * A call with this `Idempotency-Key` is still running (docs/api.md#idempotent-retries): its
 * answer is replayed once it ends, so the client retries after `Retry-After`.
 */
export class IdempotencyKeyInUseError extends GatewayError {
  readonly status = 409
  readonly code = 'idempotency_key_in_use'
  readonly type = 'invalid_request_error'
  override readonly retryable = true

  constructor(message: string, retryAfterSeconds: number) {
    super(message, { param: 'Idempotency-Key', headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } })
  }
}

/** This `Idempotency-Key` was used for a different request, or its answer could not be kept: it cannot be replayed. */
export class IdempotencyKeyReusedError extends GatewayError {
  readonly status = 422
  readonly code = 'idempotency_key_reused'
  readonly type = 'invalid_request_error'

  constructor(message: string) {
    super(message, { param: 'Idempotency-Key' })
  }
}

/**
 * A request body that stopped arriving, or arrived too slowly to finish (body-limits.ts): the
 * connection is closed, so a trickling client cannot keep it and its buffered bytes.
 */
export class RequestTimeoutError extends GatewayError {
  readonly status = 408
  readonly code = 'request_timeout'
  readonly type = 'invalid_request_error'

  constructor(message: string) {
    super(message, { headers: { connection: 'close' } })
  }
}

export class RequestTooLargeError extends GatewayError {
  readonly status = 413
  readonly code = 'request_too_large'
  readonly type = 'request_too_large'
}

export class RateLimitError extends GatewayError {
  readonly status = 429
  readonly code = 'rate_limit_exceeded'
  readonly type = 'rate_limit_error'
  override readonly retryable = true

  /** `headers`: the key's rate-limit headers, which a refusal carries like every other answer. */
  constructor(message: string, retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(message, { headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } })
  }
}

export class UpstreamError extends GatewayError {
  readonly status = 502
  readonly code = 'upstream_error'
  readonly type = 'api_error'
  override readonly retryable = true
  /** The upstream's own HTTP status, when the failure was an error answer (the route cooldowns read it). */
  readonly upstreamStatus: number | undefined

  constructor(message: string, options: { cause?: unknown; upstreamStatus?: number } = {}) {
    super(message, { cause: options.cause })
    this.upstreamStatus = options.upstreamStatus
  }
}

export class NoRouteAvailableError extends GatewayError {
  readonly status = 503
  readonly code = 'no_route_available'
  readonly type = 'overloaded_error'
  override readonly retryable = true
}

/**
 * Something the gateway itself depends on (the database, the identity provider) cannot be
 * reached: nothing is wrong with the request, and the same request can succeed shortly.
 */
export class ServiceUnavailableError extends GatewayError {
  readonly status = 503
  readonly code = 'service_unavailable'
  readonly type = 'overloaded_error'

  constructor(message: string, options: { retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, { headers: { 'retry-after': String(Math.max(1, Math.ceil(options.retryAfterSeconds ?? 5))) }, cause: options.cause })
  }
}

export class UpstreamTimeoutError extends GatewayError {
  readonly status = 504
  readonly code = 'upstream_timeout'
  readonly type = 'timeout_error'
  override readonly retryable = true
}

/**
 * An upstream stream that went silent for the provider's `streamIdleTimeoutMs`. Unlike a broken
 * stream (not billed), the gateway chose to stop it, as a client may: what was streamed is billed.
 */
export class StreamIdleTimeoutError extends UpstreamTimeoutError {}

/**
 * The client left before its answer was ready. Nobody reads the response; the status says so
 * in the request log (nginx's 499, docs/operations.md#logs).
 */
export class ClientClosedError extends GatewayError {
  readonly status = 499
  readonly code = 'client_closed'
  readonly type = 'api_error'
}

/** The last resort for bugs: never carries the original message to the client. */
export class InternalError extends GatewayError {
  readonly status = 500
  readonly code = 'internal_error'
  readonly type = 'api_error'
}
