// The floor of a relay on the gateway's own upstream client (src/upstream-http/): like
// bench/observing-proxy.ts, but the upstream is reached through that client instead of fetch,
// and each chunk is pulled straight from the socket into a direct stream. No auth, no billing,
// no parsing: what the transport alone costs.
import { createUpstreamClient, pulledBodyOf } from '../src/upstream-http/client'

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
    const pulled = pulledBodyOf(response)
    if (!pulled) return new Response(response.body, { status: response.status })
    const body = new DirectStream({
      type: 'direct',
      async pull(controller) {
        for (let chunk = await pulled.read(); chunk !== undefined; chunk = await pulled.read()) {
          const written = controller.write(chunk)
          if (typeof written !== 'number') await written
        }
        controller.close()
      },
      cancel: () => pulled.cancel(),
    })
    return new Response(body, { status: response.status, headers: { 'content-type': response.headers.get('content-type') ?? 'application/json' } })
  },
})
console.log(JSON.stringify({ message: 'listening', url: server.url.href }))
