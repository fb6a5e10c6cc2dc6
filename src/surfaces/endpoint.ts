import { Elysia, type Static, type TSchema } from 'elysia'
import type { Caller } from '../auth/authenticate'
import { type DispatchServices, dispatch } from '../dispatch/dispatcher'
import type { Route, Surface, SurfaceRequest } from '../dispatch/surface'
import { envelopeOfPath } from '../errors/render'
import type { GatewayContext } from '../http/gateway-context'
import { type DocumentedResponses, errorResponses, MODEL_CALL_ERRORS } from '../http/openapi/responses'
import { contextOf } from '../http/request-context'
import { refuseInvalidBody, refuseInvalidForm } from '../http/schema-check'
import { requestFingerprint } from '../idempotency/fingerprint'
import { idempotentCall } from '../idempotency/idempotent-call'
import type { IdempotentCalls } from '../idempotency/idempotent-calls'
import { idempotencyKeyOf } from '../idempotency/key-header'
import { RequestRecord } from '../observability/request-record'
import { isRecord } from '../util/is-record'
import { scrubCredentials } from '../util/scrub-credentials'

export interface SurfaceEndpoint<S extends TSchema, R extends Route> {
  path: string
  parse: 'json' | 'formdata'
  schema: S
  /**
   * The answer, for the API document: `json` is the JSON answer's schema (loose: native answers
   * pass through with fields of their own); `other` documents what is not that JSON (server-sent
   * events, audio, text) and is merged with it. Never validated: the dispatcher answers with a
   * Response, which Elysia sends as it is.
   */
  response: { json?: TSchema; other?: DocumentedResponses }
  detail: { tags: string[]; summary: string; description?: string }
  surface: Surface<Static<S>, R>
}

/** What a billable endpoint calls: the dispatcher's services, and the idempotent calls of its retries. */
export type SurfaceServices = DispatchServices & { idempotentCalls: IdempotentCalls }

export function surfaceEndpoint<S extends TSchema, R extends Route>(endpoint: SurfaceEndpoint<S, R>) {
  return (context: GatewayContext, services: SurfaceServices) =>
    new Elysia({ name: `surfaces ${endpoint.path}` })
      .use(context)
      .post(
        endpoint.path,
        ({ body, caller, requestId, request }) => billedCall(services, endpoint, surfaceRequest(body, caller, requestId, request), request),
        {
          parse: endpoint.parse,
          // The gateway's own check runs first: the framework's costs seconds on a large wrongly typed body,
          // and loses the name of a form field out of range.
          transform: ({ body }: { body: unknown }) => (endpoint.parse === 'json' ? refuseInvalidBody : refuseInvalidForm)(endpoint.schema, body),
          body: endpoint.schema,
          ...(endpoint.response.json ? { response: { 200: endpoint.response.json } } : {}),
          detail: { ...endpoint.detail, responses: { ...endpoint.response.other, ...errorResponses(envelopeOfPath(endpoint.path), MODEL_CALL_ERRORS) } },
        },
      )
}

/**
 * One billable call: dispatched as it comes, or, with an `Idempotency-Key`, once per key and
 * caller and path, its answer kept for the retries (docs/api.md#idempotent-retries).
 */
export async function billedCall<Body, R extends Route>(
  services: SurfaceServices,
  endpoint: { path: string; surface: Surface<Body, R> },
  request: SurfaceRequest<Body>,
  original: Request,
): Promise<Response> {
  const key = idempotencyKeyOf(request.headers)
  if (key === undefined) return dispatch(services, endpoint.surface, request)
  const identity = { scope: scopeOf(request.caller), path: endpoint.path, key }
  const fingerprint = await requestFingerprint(request.body, request.query)
  return idempotentCall(services.idempotentCalls, { identity, fingerprint, requestId: request.requestId, clientSignal: original.signal }, (signal) =>
    dispatch(services, endpoint.surface, { ...request, signal }),
  )
}

/** Whose keys these are: the API key, or the user (one per identity provider issuer and subject). */
function scopeOf(caller: Caller): string {
  return caller.kind === 'api-key' ? `key:${caller.key.id}` : caller.kind === 'user' ? `user:${caller.user.id}` : 'anonymous'
}

/** The plain values a surface's endpoint hands to the dispatcher. */
export function surfaceRequest<Body>(body: Body, caller: Caller, requestId: string, request: Request): SurfaceRequest<Body> {
  const url = new URL(request.url)
  // Every request the app serves has its record; one served outside it (a test calling the
  // endpoint alone) gets one that reports to nobody.
  const record = contextOf(request)?.record ?? new RequestRecord(requestId, request.method, UNOBSERVED)
  record.modelRequested = modelNamedIn(body)
  return { caller, body, requestId, signal: request.signal, headers: request.headers, query: url.search, record }
}

/**
 * The `model` field of a JSON body or a form, as the client wrote it, for the log and the
 * activity record: printable ASCII up to 200 characters (no catalogue id comes near), with
 * anything shaped like a credential redacted, since a client may paste anything there. Other
 * text is not recorded.
 */
function modelNamedIn(body: unknown): string | undefined {
  const model = isRecord(body) ? body.model : undefined
  return typeof model === 'string' && RECORDABLE_MODEL.test(model) ? scrubCredentials(model) : undefined
}

const RECORDABLE_MODEL = /^[\x20-\x7e]{1,200}$/

const UNOBSERVED = { streamOpened: () => undefined, finished: () => undefined }
