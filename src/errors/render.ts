import { describeDatabaseError, isTransientDatabaseError } from '../db/errors'
import { logEvent } from '../observability/log'
import { GatewayError } from './gateway-error'
import { googleErrorBody } from './google-envelope'
import { InternalError, ServiceUnavailableError } from './kinds'

/**
 * The envelopes an error is written in: OpenAI's (every /v1 path but messages, and /admin),
 * Anthropic's (/v1/messages and below) and Google's (the Gemini API under /v1beta). Every error
 * body the gateway writes comes from here, including those inside streams.
 */
export type ErrorEnvelope = 'openai' | 'messages' | 'google'

export function envelopeOfPath(pathname: string): ErrorEnvelope {
  if (pathname.startsWith('/v1beta/')) return 'google'
  return pathname === '/v1/messages' || pathname.startsWith('/v1/messages/') ? 'messages' : 'openai'
}

export function errorBody(error: GatewayError, envelope: ErrorEnvelope): object {
  if (envelope === 'google') return googleErrorBody(error)
  if (envelope === 'messages') {
    return { type: 'error', error: { type: error.type, message: error.message, code: error.code } }
  }
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } }
}

/**
 * The Responses API's own stream failures: an `error` event where the stream fails before a
 * response object exists (a native stream relayed as it came), and the `error` member of the
 * response in `response.failed` where the gateway wrote the response itself. Both carry the
 * gateway error's code and message, as every other envelope does.
 */
export function responsesStreamError(error: GatewayError, sequenceNumber: number): object {
  return { type: 'error', code: error.code, message: error.message, param: error.param ?? null, sequence_number: sequenceNumber }
}

export function responsesFailure(error: GatewayError): { code: string; message: string } {
  return { code: error.code, message: error.message }
}

/** How long a client is asked to wait when the database is away: reconnecting takes a moment. */
const DATABASE_RETRY_AFTER_SECONDS = 5
/** During an outage every request fails the same way: one line per this interval says so. */
const OUTAGE_LOG_INTERVAL_MS = 10_000
let lastOutageLog = 0

/**
 * Anything that is not a GatewayError is a bug (the client sees a bare 500, never its text,
 * and the operator one error line with the request's id), except a database that could not be
 * reached: that is an outage, answered 503 so clients retry, and recognised here once rather
 * than around every query a handler makes.
 */
export function asGatewayError(error: unknown, requestId?: string): GatewayError {
  if (error instanceof GatewayError) return error
  if (isTransientDatabaseError(error)) {
    noteDatabaseOutage(error)
    return new ServiceUnavailableError('The database is unavailable; try again shortly.', { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS, cause: error })
  }
  logUnexpected(error, requestId)
  return new InternalError('The gateway failed to handle the request.')
}

export function renderError(error: GatewayError, envelope: ErrorEnvelope): Response {
  return new Response(JSON.stringify(errorBody(error, envelope)), {
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

/**
 * A bug's trace for the operator, as one bounded event: which request, what failed, described
 * without the statement or its parameters (Drizzle's message carries both, and a key lookup's
 * parameters include its secret_hash), and where, as stack frames without the message line
 * that heads a stack and would repeat it. logEvent scrubs the line of credentials.
 */
function logUnexpected(error: unknown, requestId: string | undefined): void {
  logEvent('error', 'unhandled error', {
    ...(requestId === undefined ? {} : { request_id: requestId }),
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
