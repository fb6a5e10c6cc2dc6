/**
 * `response` with `headers` set. Responses relayed from fetch have immutable headers; those are
 * copied, not changed.
 */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  const set = (target: Response) => {
    for (const [name, value] of Object.entries(headers)) target.headers.set(name, value)
    return target
  }
  try {
    return set(response)
  } catch {
    return set(new Response(response.body, response))
  }
}
