/**
 * The one error type the gateway throws on purpose. Anything else that escapes a handler is a
 * bug and is rendered as a bare 500 without details (see render.ts).
 *
 * `type` is the messages-format error type of docs/api.md#codes; the OpenAI envelope carries it as
 * its `type` too, so both kinds of client read the same words.
 */
export abstract class GatewayError extends Error {
  abstract readonly status: number
  abstract readonly code: string
  abstract readonly type: string
  /** Whether trying another upstream route could succeed. */
  readonly retryable: boolean = false
  /** The request field the error is about, when there is one. */
  readonly param: string | null
  /** Extra response headers (Retry-After, Allow). */
  readonly headers: Record<string, string>

  constructor(message: string, options: { param?: string | null; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(bounded(message, MAX_MESSAGE_LENGTH), { cause: options.cause })
    this.name = new.target.name
    this.param = options.param == null ? null : bounded(options.param, MAX_PARAM_LENGTH)
    this.headers = options.headers ?? {}
  }
}

/**
 * Messages and params often quote what the client sent (a model id, a field name): bounded, so a
 * 5 MB model id costs the client a 404 of a few KB, never its own size back in every error body,
 * log line and span. Upstream text is scrubbed of credentials before it gets here.
 */
const MAX_MESSAGE_LENGTH = 2_000
const MAX_PARAM_LENGTH = 200

function bounded(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text
}
