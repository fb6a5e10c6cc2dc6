import type { Caller } from '../auth/authenticate'

/** What the gateway learns about one request while handling it, for its handler and its log line. */
export interface RequestContext {
  requestId: string
  caller?: Caller
}

const contexts = new WeakMap<Request, RequestContext>()

export function attachContext(request: Request, context: RequestContext): void {
  contexts.set(request, context)
}

export function contextOf(request: Request): RequestContext | undefined {
  return contexts.get(request)
}
