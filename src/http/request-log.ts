import type { RequestContext } from './request-context'

export type LogSink = (line: string) => void

/**
 * One JSON line per request. Never headers, bodies or the raw path: they carry credentials
 * and whatever a client chose to send (an id with a NUL in it, a pasted key, kilobytes of
 * path). `route` is the route's template, null for a path no route serves, so every field is
 * an id, a number or a fixed word and the line stays short.
 */
export function logRequest(
  sink: LogSink | undefined,
  request: Request,
  response: Response,
  context: RequestContext,
  latencyMs: number,
  route: string | undefined,
): void {
  if (!sink) return
  const caller = context.caller
  sink(
    JSON.stringify({
      time: new Date().toISOString(),
      request_id: context.requestId,
      method: KNOWN_METHODS.has(request.method) ? request.method : 'OTHER',
      route: route ?? null,
      status: response.status,
      latency_ms: Math.round(latencyMs * 100) / 100,
      key_id: caller?.kind === 'api-key' ? caller.key.id : null,
      user_id: caller?.kind === 'user' ? caller.user.id : null,
    }),
  )
}

/** A client may send any token as its method; the log names only the ones HTTP defines. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'])
