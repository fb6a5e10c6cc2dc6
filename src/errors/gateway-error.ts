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
    super(message, { cause: options.cause })
    this.name = new.target.name
    this.param = options.param ?? null
    this.headers = options.headers ?? {}
  }
}
