import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { ENDPOINT_RULES } from '../src/auth/endpoint-rules'
import { blockOutside, launchChromium } from './support/browser'
import { testDatabases } from './support/databases'
import { ADMIN_TOKEN } from './support/gateway'
import { gatewaySuite } from './support/gateway-suite'

/**
 * /swagger as an operator without internet sees it: headless Chromium (Debian's, installed by
 * .ci/run) with every request outside the gateway's origin aborted. Without Chromium this fails:
 * the viewer working offline is what is under test.
 */
const SCREENSHOT = '/tmp/tollgate-swagger.png'

/** Endpoints whose path ends in a wildcard (a model id holds a slash), as the document names them. */
const DOCUMENTED_WILDCARDS: Record<string, string> = {
  'GET /v1/models/*': '/v1/models/{id}',
  'GET /v1beta/models/*': '/v1beta/models/{model}',
  'POST /v1beta/models/*': '/v1beta/models/{model}:{method}',
}

type Parameter = { name: string; in: string; description?: string; schema?: { enum?: string[] } }
type Operation = { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>; security?: unknown[]; parameters?: Parameter[] }

describe('/swagger', () => {
  const served = gatewaySuite(testDatabases[0]!, { served: true })
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })

  test('renders with the network blocked: every asset comes from the gateway, no request leaves its origin', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } })
    const outside: string[] = []
    const inside: string[] = []
    await blockOutside(page, served.origin, outside, inside)
    const pageErrors: string[] = []
    page.on('pageerror', (error) => pageErrors.push(error.message))

    const response = await page.goto(`${served.origin}/swagger`)
    expect(response?.status()).toBe(200)
    // The operations are listed: the viewer ran and read the document.
    await page.getByText('Create a chat completion', { exact: false }).first().waitFor({ timeout: 30_000 })
    await page.getByText('/v1/models/{id}', { exact: true }).first().waitFor({ timeout: 10_000 })
    await page.screenshot({ path: SCREENSHOT, fullPage: false })

    expect(outside).toEqual([])
    expect(pageErrors).toEqual([])
    expect(inside).toContain('/swagger/json')
    expect(inside.some((path) => /^\/swagger\/assets\/[\d.]+\/swagger-ui-bundle\.js$/.test(path))).toBe(true)
    await page.close()
  }, 60_000)

  test('the assets are the pinned viewer, cached for good; an unknown asset is 404', async () => {
    const html = await (await fetch(`${served.origin}/swagger`)).text()
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '')
    expect(assets.length).toBe(3)
    for (const asset of assets) {
      expect(asset).toMatch(/^\/swagger\/assets\/5\.35\.0\//)
      const reply = await fetch(`${served.origin}${asset}`)
      expect(reply.status).toBe(200)
      expect(reply.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect((await reply.arrayBuffer()).byteLength).toBeGreaterThan(500)
    }
    expect((await fetch(`${served.origin}/swagger/assets/5.35.0/nothing.js`)).status).toBe(404)
  })

  test('the document: every operation answers with a schema and its errors; security follows the endpoint rules', async () => {
    const document = (await (await fetch(`${served.origin}/swagger/json`)).json()) as {
      paths: Record<string, Record<string, Operation>>
      components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { type: string; in?: string; name?: string }> }
    }
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    )
    expect(operations.length).toBeGreaterThanOrEqual(27)

    for (const { path, method, operation } of operations) {
      const where = `${method.toUpperCase()} ${path}`
      const statuses = Object.keys(operation.responses ?? {})
      const success = statuses.filter((status) => status.startsWith('2'))
      expect({ where, success: success.length }).toEqual({ where, success: 1 })
      const answer = operation.responses?.[success[0] ?? '']
      expect({ where, schemas: Object.values(answer?.content ?? {}).filter((media) => media.schema !== undefined).length > 0 }).toEqual({
        where,
        schemas: true,
      })
      expect({ where, clientErrors: statuses.some((status) => status.startsWith('4')) }).toEqual({ where, clientErrors: true })
      // Errors are written in the path's envelope, each a reference to the one shared schema.
      const envelope = path.startsWith('/v1/messages') ? 'AnthropicError' : path.startsWith('/v1beta/') ? 'GoogleError' : 'OpenAIError'
      for (const status of statuses.filter((status) => /^[45]/.test(status) && !(path === '/v1/readyz' && status === '503'))) {
        expect({ where, status, schema: operation.responses?.[status]?.content?.['application/json']?.schema }).toEqual({
          where,
          status,
          schema: { $ref: `#/components/schemas/${envelope}` },
        })
      }
    }
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['OpenAIError', 'AnthropicError']))

    // Security as the endpoint rules enforce it.
    expect(document.components.securitySchemes.xApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' })
    for (const rule of ENDPOINT_RULES) {
      const path = DOCUMENTED_WILDCARDS[`${rule.method} ${rule.path}`] ?? rule.path
      const operation = document.paths[path]?.[rule.method.toLowerCase()]
      expect({ path, documented: operation !== undefined }).toEqual({ path, documented: true })
      const expected = {
        public: [],
        'optional-bearer': [{}, { apiKey: [] }],
        bearer: [{ apiKey: [] }],
        'bearer-or-x-api-key': [{ apiKey: [] }, { xApiKey: [] }],
        'google-api-key': [{ apiKey: [] }, { googleApiKey: [] }, { googleKeyParameter: [] }],
      }[rule.credentials]
      expect({ path, security: operation?.security }).toEqual({ path, security: expected })
    }
    for (const publicPath of ['/v1/healthz', '/v1/readyz', '/v1/models/coding']) expect(document.paths[publicPath]?.get?.security).toEqual([])

    // A model id holds a slash: the endpoint is a wildcard, documented with its parameter.
    expect(document.paths['/v1/models/*']).toBeUndefined()
    expect(document.paths['/v1/models/{id}']?.get).toMatchObject({ parameters: [{ name: 'id', in: 'path', required: true }] })

    // Streams and audio are documented as what they are.
    for (const path of ['/v1/chat/completions', '/v1/messages', '/v1/responses']) {
      expect(Object.keys(document.paths[path]?.post?.responses?.['200']?.content ?? {}).sort()).toEqual(['application/json', 'text/event-stream'])
    }
    expect(Object.keys(document.paths['/v1/audio/speech']?.post?.responses?.['200']?.content ?? {})).toContain('audio/mpeg')
  })

  test('every parameter of every operation is described, and every export (format=csv|jsonl) is documented with the media type it is sent as', async () => {
    const document = (await (await fetch(`${served.origin}/swagger/json`)).json()) as { paths: Record<string, Record<string, Operation>> }
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ where: `${method.toUpperCase()} ${path}`, path, operation })),
    )
    const parameters = operations.flatMap(({ where, operation }) => (operation.parameters ?? []).map((parameter) => ({ where, parameter })))
    expect(parameters.length).toBeGreaterThanOrEqual(40)
    for (const { where, parameter } of parameters) {
      const described = typeof parameter.description === 'string' && parameter.description.trim().length >= 8
      expect({ where, parameter: `${parameter.in} ${parameter.name}`, described }).toEqual({
        where,
        parameter: `${parameter.in} ${parameter.name}`,
        described: true,
      })
    }

    const exporting = operations.filter(({ operation }) => operation.parameters?.some((parameter) => parameter.name === 'format'))
    expect(exporting.map(({ where }) => where)).toEqual(expect.arrayContaining(['GET /admin/v1/ledger', 'GET /admin/v1/usage']))
    const { key } = await served.harness.key()
    served.upstream.script({ text: 'exported', usage: { prompt_tokens: 3, completion_tokens: 1 } })
    const call = await fetch(`${served.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(call.status).toBe(200)
    for (const { where, path, operation } of exporting) {
      const formats = operation.parameters?.find((parameter) => parameter.name === 'format')?.schema?.enum ?? []
      expect({ where, formats }).toEqual({ where, formats: expect.arrayContaining(['csv', 'jsonl']) })
      const documented = operation.responses?.['200']?.content ?? {}
      for (const format of ['csv', 'jsonl']) {
        // What the endpoint really sends for the format is one of the documented media types, with a schema.
        const reply = await fetch(`${served.origin}${path}?format=${format}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
        expect({ where, format, status: reply.status }).toEqual({ where, format, status: 200 })
        const mediaType = (reply.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? ''
        expect({ where, format, mediaType, documented: documented[mediaType]?.schema !== undefined }).toEqual({ where, format, mediaType, documented: true })
        await reply.arrayBuffer()
      }
    }
  })

  test('a real answer passes through its documented endpoint unchanged (the answer schemas do not validate or strip)', async () => {
    const { key } = await served.harness.key()
    served.upstream.script({ text: 'hello', usage: { prompt_tokens: 3, completion_tokens: 1 } })
    const reply = await fetch(`${served.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(reply.status).toBe(200)
    const answer = (await reply.json()) as Record<string, unknown>
    // Fields the schema does not name (the provider's own) are still there.
    expect(answer).toMatchObject({
      object: 'chat.completion',
      service_tier: 'default',
      choices: [{ logprobs: null, message: { refusal: null, annotations: [] } }],
    })
  })
})
