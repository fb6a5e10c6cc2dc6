import { ValidationError } from 'elysia'
import { GatewayError } from '../errors/gateway-error'
import { InvalidRequestError, MethodNotAllowedError, NotFoundError } from '../errors/kinds'
import { asGatewayError, envelopeOfPath, renderError } from '../errors/render'
import type { EndpointMethods } from './method-check'
import { contextOf } from './request-context'
import { invalidRequestFor } from './schema-check'

/**
 * The one place errors become responses: whatever was thrown, wherever, is rendered in the
 * envelope of the surface the client called.
 */
export function renderFrameworkError(code: string | number, error: unknown, request: Request, methods: EndpointMethods): Response {
  const pathname = new URL(request.url).pathname
  const answered = toGatewayError(code, error, request, pathname, methods)
  contextOf(request)?.record.answeredError(answered.code)
  return renderError(answered, envelopeOfPath(pathname))
}

function toGatewayError(code: string | number, error: unknown, request: Request, pathname: string, methods: EndpointMethods): GatewayError {
  if (error instanceof GatewayError) return error
  if (error instanceof ValidationError) return validationError(error)
  switch (code) {
    case 'PARSE': {
      // The framework wraps what the body reader threw (a 413, say); that error is the answer.
      const cause = (error as { cause?: unknown }).cause
      return cause instanceof GatewayError ? cause : new InvalidRequestError('The request body could not be parsed.')
    }
    case 'NOT_FOUND': {
      const allowed = methods.allowed(pathname)
      if (allowed.length > 0) {
        return new MethodNotAllowedError(`${request.method} is not allowed on ${pathname}; use ${allowed.join(' or ')}.`, {
          headers: { allow: allowed.join(', ') },
        })
      }
      return new NotFoundError(`No endpoint ${request.method} ${pathname}.${meantPath(pathname, request.method, methods)}`)
    }
    default:
      // A database outage is answered 503 and noted where it is recognised; a bug gets a trace there too.
      return asGatewayError(error, contextOf(request)?.requestId)
  }
}

function validationError(error: ValidationError): InvalidRequestError {
  const first = error.all[0]
  if (!first || !('path' in first) || !('schema' in first))
    return new InvalidRequestError(`Invalid request${error.type === 'body' ? '' : ` in the ${error.type}`}: Invalid value.`)
  return invalidRequestFor(first, error.type)
}

/**
 * The endpoint a client most likely meant when its base URL lacks `/v1` (`/chat/completions`)
 * or repeats it (`/v1/v1/messages`): named when it exists for this method, so the 404 says what
 * to change.
 */
function meantPath(pathname: string, method: string, methods: EndpointMethods): string {
  const meant = pathname.startsWith('/v1/v1/')
    ? pathname.slice(3)
    : pathname.startsWith('/v1/') || pathname.startsWith('/admin/')
      ? undefined
      : `/v1${pathname}`
  if (meant === undefined || !methods.allowed(meant).includes(method)) return ''
  return ` The API is under one /v1: ${method} ${meant} (check the client's base URL).`
}
