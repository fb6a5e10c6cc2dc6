import { GatewayError } from '../errors/gateway-error'
import { UpstreamError, UpstreamTimeoutError } from '../errors/kinds'

/** An upstream that answered with a success status, with the option that produced it. */
export interface UpstreamAnswer<Option> {
  option: Option
  response: Response
  /** Aborts the upstream request (client gone, stream abandoned). */
  abort: () => void
}

interface Attempt {
  provider: { name: string; timeoutMs: number }
}

/**
 * Tries each option in order until one answers with a success status (CONTRACT.md §2; issue
 * "failover"): a connection error, a timeout before the response headers, 408, 429, 5xx or 529
 * moves to the next option, and so do 401 and 403, which mean the gateway's own provider key
 * is wrong; any other 4xx is the client's fault, ends the search and is returned as the error.
 * Nothing is billed here; the caller holds and settles around it.
 */
export async function firstAnswer<Option extends Attempt>(
  options: Option[],
  send: (option: Option, signal: AbortSignal) => Promise<Response>,
  mapError: (option: Option, status: number, body: string) => GatewayError,
  clientSignal: AbortSignal,
): Promise<UpstreamAnswer<Option>> {
  let lastError: GatewayError = new UpstreamError('No upstream answered.')
  for (const option of options) {
    if (clientSignal.aborted) break
    const controller = new AbortController()
    const abort = () => controller.abort()
    clientSignal.addEventListener('abort', abort, { once: true })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, option.provider.timeoutMs)
    try {
      const response = await send(option, controller.signal)
      if (response.ok) return { option, response, abort }
      const error = mapError(option, response.status, await response.text().catch(() => ''))
      if (!isRetryableStatus(response.status)) throw error
      lastError = error
    } catch (error) {
      if (error instanceof GatewayError) throw error
      lastError = timedOut
        ? new UpstreamTimeoutError(`The upstream provider did not answer within ${option.provider.timeoutMs} ms.`)
        : new UpstreamError('The upstream provider could not be reached.', { cause: error })
    } finally {
      clearTimeout(timer)
    }
    clientSignal.removeEventListener('abort', abort)
  }
  throw lastError
}

function isRetryableStatus(status: number): boolean {
  return status === 401 || status === 403 || status === 408 || status === 429 || status >= 500
}
