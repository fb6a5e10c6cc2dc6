import type { Caller } from '../auth/authenticate'
import type { RequestRecord } from '../observability/request-record'

/** What the gateway learns about one request while handling it, for its handler and its log line. */
export interface RequestContext {
  requestId: string
  caller?: Caller
  /** What the request did, for the log, metrics and traces when it ends. */
  record: RequestRecord
  /** Headers every answer to the request carries, whatever it is (the key's rate-limit headers). */
  answerHeaders: Record<string, string>
}

const contexts = new WeakMap<Request, RequestContext>()

export function attachContext(request: Request, context: RequestContext): void {
  contexts.set(request, context)
}

export function contextOf(request: Request): RequestContext | undefined {
  return contexts.get(request)
}
