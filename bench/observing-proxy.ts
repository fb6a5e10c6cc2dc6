// The floor of any relay that must see the bytes it passes on: a pass-through proxy like
// bench/bare-proxy.ts, except that it reads the upstream body in JavaScript, chunk by chunk,
// and writes each chunk unchanged into the response. No auth, no billing, no parsing.
export {} // a module, so its names do not clash with bench/bare-proxy.ts's

const upstream = process.env.UPSTREAM_URL ?? ''
const DirectStream = ReadableStream as unknown as new (source: Bun.DirectUnderlyingSource<Uint8Array>) => ReadableStream<Uint8Array>

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  async fetch(request) {
    const url = new URL(request.url)
    const response = await fetch(`${upstream}${url.pathname.replace(/^\/v1/, '')}`, {
      method: request.method,
      headers: { 'content-type': 'application/json' },
      body: await request.arrayBuffer(),
    })
    const reader = response.body?.getReader()
    if (!reader) return new Response(null, { status: response.status })
    const body = new DirectStream({
      type: 'direct',
      async pull(controller) {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return controller.close()
          const written = controller.write(value)
          if (typeof written !== 'number') await written
        }
      },
    })
    return new Response(body, { status: response.status, headers: { 'content-type': response.headers.get('content-type') ?? 'application/json' } })
  },
})
console.log(JSON.stringify({ message: 'listening', url: server.url.href }))
