import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createUpstreamClient, rawBodyOf } from '../../src/upstream-http/client'
import { endpointOf, proxyEndpoint } from '../../src/upstream-http/connect'
import type { UpstreamNetworkError } from '../../src/upstream-http/errors'
import { bypasses, proxyFor } from '../../src/upstream-http/proxy-env'
import { encodeRequest } from '../../src/upstream-http/request'
import { rejectionOf } from '../support/rejection'
import { connectProxy, readPulled, selfSignedCertificate } from './servers'

/**
 * TLS against a real Bun.serve with a certificate made by openssl: refused when untrusted (a
 * TypeError with the certificate's reason, as fetch), accepted when NODE_EXTRA_CA_CERTS names it
 * (Bun reads it at start: checked in a process of its own), and accepted by anything with
 * NODE_TLS_REJECT_UNAUTHORIZED=0. Proxies from the environment: a CONNECT tunnel for https (TLS
 * end to end through it), absolute form for http, NO_PROXY bypassing.
 */
let certificate: ReturnType<typeof selfSignedCertificate>
let tlsServer: ReturnType<typeof Bun.serve>
let plainServer: ReturnType<typeof Bun.serve>
let proxy: ReturnType<typeof connectProxy>

const echo = async (request: Request) =>
  new Response(
    new ReadableStream({
      async pull(controller) {
        controller.enqueue(`data: ${JSON.stringify({ method: request.method, body: await request.text() })}\n\n`)
        await Bun.sleep(5)
        controller.enqueue('data: [DONE]\n\n')
        controller.close()
      },
    }),
    { headers: { 'content-type': 'text/event-stream' } },
  )

beforeAll(() => {
  certificate = selfSignedCertificate()
  tlsServer = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert: Bun.file(certificate.certFile), key: Bun.file(certificate.keyFile) }, fetch: echo })
  plainServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: echo })
  proxy = connectProxy()
})
afterAll(() => {
  tlsServer.stop(true)
  plainServer.stop(true)
  proxy.stop()
  certificate.remove()
})

const STREAMED = 'data: {"method":"POST","body":"{\\"hello\\":1}"}\n\ndata: [DONE]\n\n'

/** One call from a process of its own with `env`, as call-once.ts reports it. */
async function callInProcess(url: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const child = Bun.spawn(['bun', 'test/upstream-http/call-once.ts', url], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdout: 'pipe',
  })
  const output = await new Response(child.stdout).text()
  await child.exited
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}')
}

describe('own client: TLS', () => {
  test('an untrusted certificate is refused with a TypeError naming why', async () => {
    const client = createUpstreamClient()
    const error = await rejectionOf(client.fetch(`https://127.0.0.1:${tlsServer.port}/v1`, { method: 'POST', body: '{}' }))
    expect(error).toBeInstanceOf(TypeError)
    expect((error as UpstreamNetworkError).code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT')
    client.close()
  })

  test('a trusted certificate for another name is refused (the name is checked, not only the chain)', async () => {
    const other = selfSignedCertificate('DNS:other.invalid')
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert: Bun.file(other.certFile), key: Bun.file(other.keyFile) }, fetch: echo })
    try {
      expect(await callInProcess(`https://127.0.0.1:${server.port}/v1`, { NODE_EXTRA_CA_CERTS: other.certFile })).toEqual({
        error: 'ERR_TLS_CERT_ALTNAME_INVALID',
        name: 'UpstreamNetworkError',
      })
    } finally {
      server.stop(true)
      other.remove()
    }
  })

  test('NODE_EXTRA_CA_CERTS makes the certificate trusted; the stream is read through the pulled body', async () => {
    const answer = await callInProcess(`https://localhost:${tlsServer.port}/v1`, { NODE_EXTRA_CA_CERTS: certificate.certFile })
    expect(answer).toEqual({ status: 200, text: STREAMED, pulled: true })
  })

  test('NODE_TLS_REJECT_UNAUTHORIZED=0 accepts any certificate, as with fetch', async () => {
    const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'
    const client = createUpstreamClient()
    try {
      const response = await client.fetch(`https://127.0.0.1:${tlsServer.port}/v1`, { method: 'POST', body: '{"hello":1}' })
      expect(await response.text()).toBe(STREAMED)
    } finally {
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before
      client.close()
    }
  })
})

describe('own client: proxies from the environment', () => {
  test('an https target goes through a CONNECT tunnel with TLS inside it', async () => {
    const before = proxy.lines.length
    const answer = await callInProcess(`https://localhost:${tlsServer.port}/v1`, { NODE_EXTRA_CA_CERTS: certificate.certFile, HTTPS_PROXY: proxy.url })
    expect(answer).toEqual({ status: 200, text: STREAMED, pulled: true })
    expect(proxy.lines.slice(before)).toEqual([`CONNECT localhost:${tlsServer.port} HTTP/1.1`])
  })

  test('an http target is sent to the proxy in absolute form (lower-case variable)', async () => {
    const before = proxy.lines.length
    const client = createUpstreamClient({ env: { http_proxy: proxy.url } })
    const response = await client.fetch(`http://127.0.0.1:${plainServer.port}/v1/chat?x=1`, { method: 'POST', body: '{"hello":1}' })
    expect(await readPulled(rawBodyOf(response) ?? { read: async () => undefined })).toBe(STREAMED)
    expect(proxy.lines.slice(before)).toEqual([`POST http://127.0.0.1:${plainServer.port}/v1/chat?x=1 HTTP/1.1`])
    client.close()
  })

  test('NO_PROXY sends a listed host direct; HTTP_PROXY is not used for https', async () => {
    const before = proxy.lines.length
    const client = createUpstreamClient({ env: { HTTP_PROXY: proxy.url, NO_PROXY: 'example.com, 127.0.0.1' } })
    expect(await (await client.fetch(`http://127.0.0.1:${plainServer.port}/v1`, { method: 'POST', body: '{"hello":1}' })).text()).toBe(STREAMED)
    expect(proxy.lines.length).toBe(before)
    client.close()
    expect(proxyFor(new URL('https://api.example.com/v1'), { HTTP_PROXY: proxy.url })).toBeUndefined()
  })

  test('a proxy that refuses the tunnel is a network error', async () => {
    const answer = await callInProcess('https://127.0.0.1:1/v1', { HTTPS_PROXY: proxy.url })
    expect(answer.error).toBe('ProxyTunnelFailed')
  })

  test("a proxy URL's credentials go as Proxy-Authorization, to the proxy only", () => {
    const target = new URL('http://upstream.test/v1/chat')
    const proxied = new TextDecoder().decode(
      encodeRequest('POST', target, endpointOf(target), proxyEndpoint(new URL('http://user:p%40ss@proxy.test:3128')), {}, null),
    )
    expect(proxied).toContain(`proxy-authorization: Basic ${btoa('user:p@ss')}\r\n`)
    expect(proxied.startsWith('POST http://upstream.test/v1/chat HTTP/1.1\r\nhost: upstream.test\r\n')).toBe(true)
    const direct = new TextDecoder().decode(encodeRequest('POST', target, endpointOf(target), undefined, {}, null))
    expect(direct).not.toContain('proxy-authorization')
    expect(direct.startsWith('POST /v1/chat HTTP/1.1\r\n')).toBe(true)
  })

  test('NO_PROXY entries: domains cover their subdomains, ports narrow, * covers all', () => {
    const url = (text: string) => new URL(text)
    expect(bypasses(url('https://api.example.com/v1'), 'example.com')).toBe(true)
    expect(bypasses(url('https://api.example.com/v1'), '.example.com')).toBe(true)
    expect(bypasses(url('https://notexample.com/v1'), 'example.com')).toBe(false)
    expect(bypasses(url('http://10.0.0.5:8080/'), '10.0.0.5:8080')).toBe(true)
    expect(bypasses(url('http://10.0.0.5:8081/'), '10.0.0.5:8080')).toBe(false)
    expect(bypasses(url('http://[::1]:8080/'), '::1')).toBe(true)
    expect(bypasses(url('http://anything/'), '*')).toBe(true)
    expect(proxyFor(url('http://x/'), { HTTP_PROXY: 'proxy:3128' })?.href).toBe('http://proxy:3128/')
  })
})
