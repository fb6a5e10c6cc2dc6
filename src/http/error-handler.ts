import { ValidationError } from 'elysia'
import { describeDatabaseError } from '../db/errors'
import { GatewayError } from '../errors/gateway-error'
import { InternalError, InvalidRequestError, MethodNotAllowedError, NotFoundError } from '../errors/kinds'
import { asGatewayError, renderError, surfaceOfPath } from '../errors/render'
import { logEvent } from '../observability/log'
import { pointerToPath } from '../util/json-pointer'
import { describeSchemaError } from '../util/schema-errors'
import type { RouteMethods } from './method-check'

/**
 * The one place errors become responses: whatever was thrown, wherever, is rendered in the
 * envelope of the surface the client called.
 */
export function renderFrameworkError(code: string | number, error: unknown, request: Request, methods: RouteMethods): Response {
  const pathname = new URL(request.url).pathname
  return renderError(toGatewayError(code, error, request.method, pathname, methods), surfaceOfPath(pathname))
}

function toGatewayError(code: string | number, error: unknown, method: string, pathname: string, methods: RouteMethods): GatewayError {
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
        return new MethodNotAllowedError(`${method} is not allowed on ${pathname}; use ${allowed.join(' or ')}.`, {
          headers: { allow: allowed.join(', ') },
        })
      }
      return new NotFoundError(`No route ${method} ${pathname}.`)
    }
    default: {
      const mapped = asGatewayError(error)
      // A database outage is answered 503 and noted where it is recognised; only bugs get a trace.
      if (mapped instanceof InternalError) logUnhandled(error)
      return mapped
    }
  }
}

function validationError(error: ValidationError): InvalidRequestError {
  const first = error.all[0]
  const param = first && 'path' in first ? pointerToPath(first.path) : ''
  const where = error.type === 'body' ? '' : ` in the ${error.type}`
  const message = first && 'schema' in first ? describeSchemaError(first) : 'Invalid value'
  if (!param) return new InvalidRequestError(`Invalid request${where}: ${message}.`)
  return new InvalidRequestError(`Invalid value for '${param}'${where}: ${message}.`, { param })
}

/**
 * A bug's trace for the operator, as one bounded event: what failed, described without the
 * statement or its parameters (Drizzle's message carries both, and a key lookup's parameters
 * include its secret_hash), and where, as stack frames without the message line that heads a
 * stack and would repeat it.
 */
function logUnhandled(error: unknown): void {
  logEvent('error', 'unhandled error', {
    error_name: error instanceof Error ? error.name : typeof error,
    error: describeDatabaseError(error),
    stack: stackFrames(error),
  })
}

const MAX_STACK_FRAMES = 6

function stackFrames(error: unknown): string[] | undefined {
  if (!(error instanceof Error) || !error.stack) return undefined
  return error.stack
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('at '))
    .slice(0, MAX_STACK_FRAMES)
}
