import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { asGatewayError, renderError, surfaceOfPath } from './errors/render'
import { InvalidRequestError } from './errors/kinds'
import { renderFrameworkError } from './http/error-handler'
import { gatewayContext } from './http/gateway-context'
import { RouteMethods } from './http/method-check'
import { attachContext } from './http/request-context'
import { logRequest, type LogSink } from './http/request-log'
import { adminRoutes } from './routes/admin'
import { messagesRoutes } from './routes/anthropic/messages'
import { audioRoutes } from './routes/openai/audio'
import { chatCompletionRoutes } from './routes/openai/chat-completions'
import { embeddingsRoutes } from './routes/openai/embeddings'
import { imagesRoutes } from './routes/openai/images'
import { responsesRoutes } from './routes/openai/responses'
import { videoRoutes } from './routes/openai/videos'
import { healthRoutes } from './routes/openai/health'
import { modelRoutes } from './routes/openai/models'
import { pricingRoutes } from './routes/openai/pricing'
import { walletRoutes } from './routes/openai/wallet'
import type { Services } from './services'
import { newId } from './util/ids'

export interface Gateway {
  /** Serves one request: what Bun.serve calls, and what tests call. */
  handle(request: Request): Promise<Response>
  /** Every route the app serves, for the route-rule checks. */
  routes: readonly { method: string; path: string }[]
}

export function createApp(services: Services, options: { log?: LogSink; version?: string } = {}): Gateway {
  const context = gatewayContext(services)
  // Without TOLLGATE_ADMIN_TOKEN the admin API does not exist (CONTRACT.md §4): its routes are
  // not registered, so every method on every /admin path is the router's plain 404 (no 405
  // naming the methods), and /swagger documents neither the routes nor the admin token.
  const adminEnabled = Boolean(services.config.adminToken)
  let methods = new RouteMethods([])
  // Find the path after the scheme, not 11 characters in: a short Host (`http://llm/v1/...`) would
  // otherwise lose the start of its path. The gateway itself speaks plain HTTP.
  const app = new Elysia({ handler: { standardHostname: false } })
    .use(
      openapi({
        path: '/swagger',
        documentation: {
          info: {
            title: 'Tollgate',
            version: options.version ?? 'dev',
            description: 'A billing and routing gateway in front of model providers. Send `Authorization: Bearer <API key>`.',
          },
          components: {
            securitySchemes: {
              apiKey: { type: 'http', scheme: 'bearer', description: 'tollgate_sk_prod_… / tollgate_sk_dev_… or a user access token' },
              ...(adminEnabled ? { adminToken: { type: 'http' as const, scheme: 'bearer', description: 'TOLLGATE_ADMIN_TOKEN' } } : {}),
            },
          },
          security: [{ apiKey: [] }],
        },
      }),
    )
    .onError(({ code, error, request }) => renderFrameworkError(code, error, request, methods))
    .use(context)
    // Coding agents probe the base URL before their first call (Claude Code sends HEAD
    // /api/hello); the router answers HEAD for every GET route.
    .get('/', () => ({ name: 'tollgate', docs: '/swagger' }), { detail: { hide: true } })
    .get('/api/hello', () => ({ name: 'tollgate' }), { detail: { hide: true } })
    .use(healthRoutes(services))
    .use(modelRoutes(context, services))
    .use(walletRoutes(context, services))
    .use(pricingRoutes(context, services))
    .use(chatCompletionRoutes(context, services))
    .use(messagesRoutes(context, services))
    .use(embeddingsRoutes(context, services))
    .use(imagesRoutes(context, services))
    .use(audioRoutes(context, services))
    .use(videoRoutes(context, services))
    .use(responsesRoutes(context, services))
    .use(adminEnabled ? adminRoutes(context, services) : new Elysia({ name: 'routes/admin-disabled' }))
  methods = new RouteMethods(app.routes)

  return {
    routes: app.routes.map((route) => ({ method: route.method, path: route.path })),
    async handle(request) {
      const startedAt = performance.now()
      const requestId = newId('req')
      const requestContext = { requestId }
      attachContext(request, requestContext)
      const pathname = pathOf(request)
      const surface = surfaceOfPath(pathname ?? '/')
      let response: Response
      try {
        if (pathname === undefined) throw new InvalidRequestError('The request URL is malformed (check the Host header).')
        response = await app.handle(request)
      } catch (error) {
        response = renderError(asGatewayError(error), surface)
      }
      // The Anthropic SDKs read the id from `request-id` (Anthropic's own header: `_request_id`
      // on results, `requestID` on errors); it also replaces any a native upstream's answer carried.
      response = withHeaders(response, surface === 'messages' ? { 'x-request-id': requestId, 'request-id': requestId } : { 'x-request-id': requestId })
      logRequest(options.log, request, response, requestContext, performance.now() - startedAt, methods.template(pathname ?? '/'))
      return response
    },
  }
}

/** The request's path, or undefined when the URL the runtime built (from a malformed Host header) does not parse. */
function pathOf(request: Request): string | undefined {
  try {
    return new URL(request.url).pathname
  } catch {
    return undefined
  }
}

/** Responses relayed from fetch have immutable headers; those are copied, not changed. */
function withHeaders(response: Response, headers: Record<string, string>): Response {
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
