/**
 * Requests that hold their connection open while the gateway waits on the upstream (a video
 * generation can take ten minutes, docs/api.md#limits). Bun's idle timeout, at most 255 s, would cut
 * them: the server lifts it for these requests alone.
 */
const LONG_RUNNING = new Set(['/v1/videos/generations'])

export function isLongRunning(request: Request): boolean {
  const url = request.url
  const pathStart = url.indexOf('/', url.indexOf('//') + 2)
  const queryStart = url.indexOf('?', pathStart)
  return LONG_RUNNING.has(url.slice(pathStart, queryStart < 0 ? undefined : queryStart))
}
