import { Elysia } from 'elysia'
import { checkAdminToken } from '../auth/admin-token'
import type { Caller } from '../auth/authenticate'
import { ruleFor } from '../auth/route-rules'
import type { Services } from '../services'
import { bodyLimitFor, checkDeclaredLength } from './body-limits'
import { MalformedBody, parseJsonBody } from './json-body'
import { contextOf } from './request-context'

const ANONYMOUS: Caller = { kind: 'anonymous' }

/**
 * The per-request steps every route shares, in order: read the body, find who is calling
 * (the route rules table for /v1, the admin token for /admin), and only then complain about
 * a body that could not be read. Schema validation comes after, so a caller without
 * credentials learns nothing about the body's shape.
 */
export function gatewayContext(services: Services) {
  return new Elysia({ name: 'gateway-context' })
    .onParse({ as: 'global' }, ({ request, contentType }) => {
      if (contentType?.startsWith('multipart/form-data')) {
        // Forms are read by the framework; an oversized one is refused before that.
        checkDeclaredLength(request, bodyLimitFor(new URL(request.url).pathname))
        return
      }
      return parseJsonBody(request)
    })
    .derive({ as: 'global' }, async ({ request, route, body }) => {
      const context = contextOf(request)
      const caller = await identify(services, request, route)
      if (context) context.caller = caller
      if (body instanceof MalformedBody) throw body.toError()
      return { caller, requestId: context?.requestId ?? '' }
    })
}

async function identify(services: Services, request: Request, route: string): Promise<Caller> {
  if (route.startsWith('/admin/')) {
    checkAdminToken(services.config.adminToken, request.headers)
    return ANONYMOUS
  }
  const rule = ruleFor(request.method, route)
  return rule ? services.authenticator.authenticate(rule, request.headers) : ANONYMOUS
}

export type GatewayContext = ReturnType<typeof gatewayContext>
