import { type DocumentDecoration, type TSchema, t } from 'elysia'
import type { ErrorEnvelope } from '../../errors/render'

/** An operation's documented responses, as an endpoint's `detail.responses` carries them. */
export type DocumentedResponses = NonNullable<DocumentDecoration['responses']>
type DocumentedResponse = Extract<DocumentedResponses[string], { description: string }>
/** A schema as the document holds it: JSON Schema (a TypeBox schema is one). */
export type DocumentedSchema = NonNullable<NonNullable<DocumentedResponse['content']>[string]['schema']>

/**
 * The two error envelopes (docs/api.md#errors), each defined once in the document's
 * `components.schemas` and referenced by every error response: OpenAI's for most paths,
 * Anthropic's for /v1/messages and below.
 */
export const ERROR_ENVELOPE_SCHEMAS = {
  OpenAIError: t.Object(
    {
      error: t.Object({
        message: t.String(),
        type: t.String({ description: 'The error type (`invalid_request_error`, `authentication_error`, `billing_error`, …)' }),
        param: t.Union([t.String(), t.Null()], { description: 'The request field the error is about, when there is one' }),
        code: t.String({ description: 'The machine-readable reason (`insufficient_balance`, `model_not_found`, …)' }),
      }),
    },
    { description: "OpenAI's error envelope" },
  ),
  AnthropicError: t.Object(
    {
      type: t.Literal('error'),
      error: t.Object({
        type: t.String({ description: 'The error type (`invalid_request_error`, `authentication_error`, `billing_error`, …)' }),
        message: t.String(),
        code: t.String({ description: 'The machine-readable reason (`insufficient_balance`, `model_not_found`, …)' }),
      }),
    },
    { description: "Anthropic's error envelope (/v1/messages and below)" },
  ),
  GoogleError: t.Object(
    {
      error: t.Object({
        code: t.Integer({ description: 'The HTTP status' }),
        message: t.String(),
        status: t.String({ description: 'The google.rpc.Code name (`INVALID_ARGUMENT`, `UNAUTHENTICATED`, `RESOURCE_EXHAUSTED`, …)' }),
        details: t.Array(
          t.Object({
            '@type': t.Literal('type.googleapis.com/google.rpc.ErrorInfo'),
            reason: t.String({ description: 'The machine-readable reason (`insufficient_balance`, `model_not_found`, …)' }),
            domain: t.Literal('tollgate'),
          }),
        ),
      }),
    },
    { description: "Google's error envelope (the Gemini API under /v1beta)" },
  ),
} as const

const ENVELOPE_SCHEMA_NAMES: Record<ErrorEnvelope, keyof typeof ERROR_ENVELOPE_SCHEMAS> = {
  openai: 'OpenAIError',
  messages: 'AnthropicError',
  google: 'GoogleError',
}

/** What each error status means; `error.code` names the reason (docs/api.md#codes). */
const ERROR_STATUSES = {
  400: 'Invalid request: a body, field or URL that does not validate (`invalid_request`); for model calls also `model_not_supported` or `content_policy_violation`',
  401: 'Missing or invalid credential (`invalid_api_key`, `invalid_token`, `insufficient_scope`)',
  402: 'Not enough available credit for the hold (`insufficient_balance`); nothing was sent upstream',
  403: 'The key or user may not do this (`insufficient_scope`, `model_not_allowed`, `api_key_quota_exceeded`, `user_quota_exceeded`)',
  404: 'No such model or record (`model_not_found`, `not_found`)',
  408: 'The request body arrived too slowly (`request_timeout`)',
  409: 'The idempotency key was already used with other values (`idempotency_conflict`), or a model call with this `Idempotency-Key` still runs (`idempotency_key_in_use`; Retry-After says when to try again)',
  413: 'The request body is over its limit (`request_too_large`)',
  422: 'This `Idempotency-Key` was used for another request, or its answer was not kept (`idempotency_key_reused`)',
  429: "The key's rate limit is reached (`rate_limit_exceeded`); Retry-After says when to try again",
  500: 'The gateway failed to handle the request (`internal_error`)',
  502: 'Every provider route failed (`upstream_error`); not billed',
  503: 'No route can serve the model now, or the database is away (`no_route_available`, `service_unavailable`); Retry-After says when to try again',
  504: 'The provider did not answer in time (`upstream_timeout`); not billed',
} as const

export type ErrorStatus = keyof typeof ERROR_STATUSES

/** Public endpoints fail only on a request that cannot be read, or on a bug. */
export const PUBLIC_ERRORS: readonly ErrorStatus[] = [400, 500]
/** Reads that need a credential (the key's scope, its rate limit and the database included). */
export const KEYED_READ_ERRORS: readonly ErrorStatus[] = [400, 401, 403, 429, 500, 503]
/** A billed call to a model: a hold first, then the providers. */
export const MODEL_CALL_ERRORS: readonly ErrorStatus[] = [400, 401, 402, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504]

/** The error responses an operation can return, each in its path's envelope. */
export function errorResponses(envelope: ErrorEnvelope, statuses: readonly ErrorStatus[]): DocumentedResponses {
  const schema = { $ref: `#/components/schemas/${ENVELOPE_SCHEMA_NAMES[envelope]}` }
  return Object.fromEntries(statuses.map((status) => [String(status), { description: ERROR_STATUSES[status], content: { 'application/json': { schema } } }]))
}

/**
 * A 2xx answer documented without being validated: media other than JSON (server-sent events,
 * audio, text), and JSON the gateway passes through. The document merges it with what the
 * endpoint's `response:` schema generates for the same status.
 */
export function answerResponse(description: string, content: Record<string, TSchema | DocumentedSchema>, status = 200): DocumentedResponses {
  return { [String(status)]: { description, content: Object.fromEntries(Object.entries(content).map(([media, schema]) => [media, { schema }])) } }
}

/** A streamed answer: server-sent events, described in words (their JSON varies by event type). */
export function eventStream(description: string): DocumentedSchema {
  return { type: 'string', description }
}

/** Bytes in the named media type (audio, say). */
export const BINARY: DocumentedSchema = { type: 'string', format: 'binary' }
