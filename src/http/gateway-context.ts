import { Elysia } from 'elysia'
import { checkAdminToken } from '../auth/admin-token'
import type { Caller } from '../auth/authenticate'
import { ruleFor } from '../auth/route-rules'
import type { Services } from '../services'
import { NotFoundError } from '../errors/kinds'
import { bodyLimitFor, checkDeclaredLength } from './body-limits'
import { MalformedBody } from './json-body'
import { UNREAD_BODY, UnreadBody, readRequestBody } from './request-body'
import { contextOf } from './request-context'

const ANONYMOUS: Caller = { kind: 'anonymous' }

/**
 * The per-request steps every route shares, in order: refuse a body whose declared length is
 * over its path's limit, find who is calling (the route rules table for /v1, the admin token
 * for /admin), and only then read the body and complain about one that could not be read.
 * Schema validation comes after, so a caller without credentials learns nothing about the
 * body's shape and costs no more than its headers.
 */
export function gatewayContext(services: Services) {
  return new Elysia({ name: 'gateway-context' })
    .onParse({ as: 'global' }, ({ request }) => {
      checkDeclaredLength(request, bodyLimitFor(new URL(request.url).pathname))
      // Not undefined: that would hand the body to the framework's own readers, which buffer
      // all of it (forms included) before anyone knows who sent it.
      return UNREAD_BODY
    })
    .derive({ as: 'global' }, async (handlerContext) => {
      const { request, route } = handlerContext
      const context = contextOf(request)
      const caller = await identify(services, request, route)
      if (context) context.caller = caller
      // Replaced in place: schema validation, which runs next, reads the context's body.
      if (handlerContext.body instanceof UnreadBody) handlerContext.body = await readRequestBody(request)
      if (handlerContext.body instanceof MalformedBody) throw handlerContext.body.toError()
      return { caller, requestId: context?.requestId ?? '' }
    })
}

async function identify(services: Services, request: Request, route: string): Promise<Caller> {
  if (route.startsWith('/admin/')) {
    checkAdminToken(services.config.adminToken, request.headers)
    return ANONYMOUS
  }
  const rule = ruleFor(request.method, route)
  if (rule) return services.authenticator.authenticate(rule, request.headers)
  // Fail closed: an API route the rules table does not name is served to nobody.
  if (route.startsWith('/v1/')) throw new NotFoundError(`No route ${request.method} ${route}.`)
  return ANONYMOUS
}

export type GatewayContext = ReturnType<typeof gatewayContext>
