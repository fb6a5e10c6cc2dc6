import { GatewayError } from './gateway-error'
import { InternalError } from './kinds'

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

/** Anything that is not a GatewayError is a bug: the client sees a bare 500, never its text. */
export function asGatewayError(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : new InternalError('The gateway failed to handle the request.')
}

export function renderError(error: GatewayError, surface: Surface): Response {
  return new Response(JSON.stringify(errorBody(error, surface)), {
    status: error.status,
    headers: { 'content-type': 'application/json', ...error.headers },
  })
}
