import { describeDatabaseError, isTransientDatabaseError } from '../db/errors'
import { logEvent } from '../observability/log'
import { GatewayError } from './gateway-error'
import { InternalError, ServiceUnavailableError } from './kinds'

/** The two client-facing wire formats an error can be written in (CONTRACT.md §6). */
export type Surface = 'openai' | 'messages'

export function surfaceOfPath(pathname: string): Surface {
  return pathname === '/v1/messages' || pathname.startsWith('/v1/messages/') ? 'messages' : 'openai'
}

export function errorBody(error: GatewayError, surface: Surface): object {
  if (surface === 'messages') {
    return { type: 'error', error: { type: error.type, message: error.message, code: error.code } }
  }
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } }
}

/** How long a client is asked to wait when the database is away: reconnecting takes a moment. */
const DATABASE_RETRY_AFTER_SECONDS = 5
/** During an outage every request fails the same way: one line per this interval says so. */
const OUTAGE_LOG_INTERVAL_MS = 10_000
let lastOutageLog = 0

/**
 * Anything that is not a GatewayError is a bug (the client sees a bare 500, never its text),
 * except a database that could not be reached: that is an outage, answered 503 so clients retry,
 * and recognised here once rather than around every query a handler makes.
 */
export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  if (isTransientDatabaseError(error)) {
    noteDatabaseOutage(error)
    return new ServiceUnavailableError('The database is unavailable; try again shortly.', { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS, cause: error })
  }
  return new InternalError('The gateway failed to handle the request.')
}

export function renderError(error: GatewayError, surface: Surface): Response {
  return new Response(JSON.stringify(errorBody(error, surface)), {
    status: error.status,
    headers: { 'content-type': 'application/json', ...error.headers },
  })
}

function noteDatabaseOutage(error: unknown): void {
  const now = Date.now()
  if (now - lastOutageLog < OUTAGE_LOG_INTERVAL_MS) return
  lastOutageLog = now
  logEvent('warn', 'database unavailable; requests that need it answer 503', { error: describeDatabaseError(error) })
}
