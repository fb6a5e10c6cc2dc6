import { Elysia } from 'elysia'
import { checkAdminToken } from '../auth/admin-token'
import type { Authenticator, Caller } from '../auth/authenticate'
import { ruleFor } from '../auth/endpoint-rules'
import type { RateLimitHeaders } from '../auth/rate-limit'
import { NotFoundError } from '../errors/kinds'
import type { RequestParty } from '../observability/request-record'
import { bodyLimitFor, checkDeclaredLength } from './body-limits'
import { MalformedBody } from './json-body'
import { readRequestBody, UNREAD_BODY, UnreadBody } from './request-body'
import { contextOf } from './request-context'

const ANONYMOUS: Caller = { kind: 'anonymous' }

/** Who may call: the admin token of the config as it is now, and the authenticator of everything under /v1. */
export interface CallerCheck {
  readonly config: { readonly adminToken: string | undefined }
  readonly authenticator: Authenticator
}

/**
 * The per-request steps every endpoint shares, in order: refuse a body whose declared length is
 * over its path's limit, find who is calling (the endpoint rules table for /v1, the admin token
 * for /admin), and only then read the body and complain about one that could not be read.
 * Schema validation comes after, so a caller without credentials learns nothing about the
 * body's shape and costs no more than its headers.
 */
export function gatewayContext(services: CallerCheck) {
  return new Elysia({ name: 'gateway-context' })
    .onParse({ as: 'global' }, ({ request }) => {
      checkDeclaredLength(request, bodyLimitFor(new URL(request.url).pathname))
      // Not undefined: that would hand the body to the framework's own readers, which buffer
      // all of it (forms included) before anyone knows who sent it.
      return UNREAD_BODY
    })
    .derive({ as: 'global' }, async (handlerContext) => {
      // Elysia's `route` is the path template of the endpoint that matched (`/admin/v1/keys/:id`).
      const { request, route: pathTemplate } = handlerContext
      const context = contextOf(request)
      const answerLimits = (headers: RateLimitHeaders) => {
        if (context) Object.assign(context.answerHeaders, headers)
      }
      const identified = (caller: Caller) => {
        if (context) context.record.party = partyOf(caller)
      }
      const authenticate = () => identify(services, request, pathTemplate, answerLimits, identified)
      const caller = await (context ? context.record.time('authenticate', authenticate) : authenticate())
      if (context) context.caller = caller
      // Replaced in place: schema validation, which runs next, reads the context's body.
      if (handlerContext.body instanceof UnreadBody) handlerContext.body = await readRequestBody(request)
      if (handlerContext.body instanceof MalformedBody) throw handlerContext.body.toError()
      return { caller, requestId: context?.requestId ?? '' }
    })
}

async function identify(
  services: CallerCheck,
  request: Request,
  pathTemplate: string,
  onLimits: (headers: RateLimitHeaders) => void,
  onIdentified: (caller: Caller) => void,
): Promise<Caller> {
  if (pathTemplate.startsWith('/admin/')) {
    checkAdminToken(services.config.adminToken, request.headers)
    return ANONYMOUS
  }
  const rule = ruleFor(request.method, pathTemplate)
  if (rule) {
    const query = rule.credentials === 'google-api-key' ? new URL(request.url).searchParams : undefined
    return services.authenticator.authenticate(rule, request.headers, onLimits, onIdentified, query)
  }
  // Fail closed: an API endpoint the rules table does not name is served to nobody.
  if (pathTemplate.startsWith('/v1/') || pathTemplate.startsWith('/v1beta/')) throw new NotFoundError(`No endpoint ${request.method} ${pathTemplate}.`)
  return ANONYMOUS
}

/** The ids of a caller the request record keeps; undefined for an anonymous one. */
export function partyOf(caller: Caller): RequestParty | undefined {
  if (caller.kind === 'api-key') return { accountId: caller.key.accountId, keyId: caller.key.id, userId: null, userSub: null }
  if (caller.kind === 'user') return { accountId: null, keyId: null, userId: caller.user.id, userSub: caller.user.subject }
  return undefined
}

export type GatewayContext = ReturnType<typeof gatewayContext>
