import type { Fetch } from '../../src/providers/adapter'

/** One request an adapter made, as the upstream would have seen it. */
export interface RecordedRequest {
  url: string
  method: string
  /** Header names lower-cased. */
  headers: Record<string, string>
  /** The body as sent: text, a form, or nothing. */
  body: string | FormData | undefined
  signal: AbortSignal | undefined
}

/**
 * A fetch that never opens a socket: it records every request and answers each with the next
 * response queued (in order). A request with nothing queued fails the test loudly.
 */
export function fakeFetch() {
  const requests: RecordedRequest[] = []
  const queued: Response[] = []
  const fetch: Fetch = async (url, init) => {
    requests.push({ url, method: init.method ?? 'GET', headers: headersOf(init.headers), body: bodyOf(init.body), signal: init.signal ?? undefined })
    const next = queued.shift()
    if (!next) throw new Error(`fake fetch: no response queued for ${init.method ?? 'GET'} ${url}`)
    return next
  }
  return {
    fetch,
    requests,
    /** Queues the responses the next requests get, in order. */
    answer(...responses: Response[]) {
      queued.push(...responses)
    },
    /** The one request made so far; fails when there were none or several. */
    only(): RecordedRequest {
      if (requests.length !== 1) throw new Error(`expected exactly one request, saw ${requests.length}`)
      const [request] = requests
      if (!request) throw new Error('no request')
      return request
    },
  }
}

export type FakeFetch = ReturnType<typeof fakeFetch>

function headersOf(init: HeadersInit | undefined): Record<string, string> {
  return Object.fromEntries(new Headers(init).entries())
}

function bodyOf(body: BodyInit | null | undefined): string | FormData | undefined {
  if (body === undefined || body === null) return undefined
  if (typeof body === 'string' || body instanceof FormData) return body
  if (body instanceof URLSearchParams) return body.toString()
  throw new Error('fake fetch: a body kind the adapters are not expected to send')
}
