// The floor: a pass-through proxy in Bun with no auth, no billing, no parsing.
const upstream = process.env.UPSTREAM_URL ?? ''
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
    return new Response(response.body, { status: response.status, headers: { 'content-type': response.headers.get('content-type') ?? 'application/json' } })
  },
})
console.log(JSON.stringify({ message: 'listening', url: server.url.href }))
