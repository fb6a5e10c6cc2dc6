// The floor of a relay on the gateway's own upstream client (src/upstream-http/): like
// bench/observing-proxy.ts, but the upstream is reached through that client instead of fetch,
// and each chunk is piped from the socket's callback straight into a direct stream, as the
// gateway's relay is fed. No auth, no billing, no parsing: what the transport alone costs.
import { createUpstreamClient, rawBodyOf } from '../src/upstream-http/client'

const upstream = process.env.UPSTREAM_URL ?? ''
const DirectStream = ReadableStream as unknown as new (source: Bun.DirectUnderlyingSource<Uint8Array>) => ReadableStream<Uint8Array>
const client = createUpstreamClient()

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  async fetch(request) {
    const url = new URL(request.url)
    const response = await client.fetch(`${upstream}${url.pathname.replace(/^\/v1/, '')}`, {
      method: request.method,
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array(await request.arrayBuffer()),
    })
    const raw = rawBodyOf(response)
    if (!raw) return new Response(response.body, { status: response.status })
    const body = new DirectStream({
      type: 'direct',
      pull(controller) {
        raw.pipe({
          bytes(chunk) {
            const written = controller.write(chunk)
            if (typeof written === 'number') return
            raw.pause()
            written.then(() => raw.resume())
          },
          end: () => controller.close(),
          fail: (error) => controller.close(error instanceof Error ? error : new Error(String(error))),
        })
      },
      cancel: () => raw.cancel(),
    })
    return new Response(body, { status: response.status, headers: { 'content-type': response.headers.get('content-type') ?? 'application/json' } })
  },
})
console.log(JSON.stringify({ message: 'listening', url: server.url.href }))
