import type { RequestContext } from './request-context'

export type LogSink = (line: string) => void

/** One JSON line per request. Never headers or bodies: they carry credentials. */
export function logRequest(sink: LogSink | undefined, request: Request, response: Response, context: RequestContext, latencyMs: number): void {
  if (!sink) return
  const caller = context.caller
  sink(
    JSON.stringify({
      time: new Date().toISOString(),
      request_id: context.requestId,
      method: request.method,
      route: new URL(request.url).pathname,
      status: response.status,
      latency_ms: Math.round(latencyMs * 100) / 100,
      key_id: caller?.kind === 'api-key' ? caller.key.id : null,
      user_id: caller?.kind === 'user' ? caller.user.id : null,
    }),
  )
}
