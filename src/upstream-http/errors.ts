/**
 * The client's failures, shaped like `fetch`'s: a network failure is a TypeError (the Fetch
 * standard's "network error") carrying a `code` as Bun's fetch does (`ConnectionRefused`,
 * `ECONNRESET`, ...), and an abort rejects with the signal's own reason (an AbortError, or a
 * TimeoutError for `AbortSignal.timeout`). The dispatcher classifies them as it classifies
 * fetch's: anything that is not a GatewayError before the headers is "unreachable" and fails
 * over; a failure while reading the body breaks the stream (UpstreamError).
 */
export class UpstreamNetworkError extends TypeError {
  readonly code: string

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'UpstreamNetworkError'
    this.code = code
  }
}

/** The upstream broke HTTP/1.1: a bad status line, header, chunk size, or a head past its bound. */
export function protocolError(message: string): UpstreamNetworkError {
  return new UpstreamNetworkError('EPROTO', `The upstream broke HTTP/1.1: ${message}`)
}

/** The connection closed before the response (or its body) was complete. */
export function closedEarly(what: string): UpstreamNetworkError {
  return new UpstreamNetworkError('ECONNRESET', `The upstream closed the connection before ${what}.`)
}

/** What an aborted signal rejects with: its reason, as fetch does. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError')
}
