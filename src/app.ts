import { Elysia } from 'elysia'
import { activityRowOf } from './activity/activity-row'
import { isRecordedEndpoint } from './activity/recorded-endpoints'
import { type EndpointRule, ruleFor } from './auth/endpoint-rules'
import { adminEndpoints } from './endpoints/admin'
import { consoleEndpoints } from './endpoints/console'
import { healthEndpoints } from './endpoints/health'
import { metricsEndpoint } from './endpoints/metrics'
import { modelEndpoints } from './endpoints/models'
import { pricingEndpoint } from './endpoints/pricing'
import { swaggerEndpoints } from './endpoints/swagger'
import { usageEndpoint } from './endpoints/usage'
import { walletEndpoint } from './endpoints/wallet'
import { InvalidRequestError } from './errors/kinds'
import { asGatewayError, envelopeOfPath, renderError } from './errors/render'
import { renderFrameworkError } from './http/error-handler'
import { gatewayContext, partyOf } from './http/gateway-context'
import { EndpointMethods } from './http/method-check'
import { attachContext, type RequestContext } from './http/request-context'
import { type LogSink, logRequest } from './http/request-log'
import { withHeaders } from './http/response-headers'
import { REPLAYED_HEADER } from './idempotency/idempotent-call'
import { metricsSink } from './observability/metrics'
import { CLIENT_CLOSED_STATUS, outcomeOfStatus, RequestRecord, type RequestRecordSink, type RequestTransport } from './observability/request-record'
import { Tracing } from './observability/tracing'
import type { Services } from './services/services'
import { surfaceEndpoints } from './surfaces'
import { newId } from './util/ids'

export interface Gateway {
  /** Serves one request: what Bun.serve calls, and what tests call. */
  handle(request: Request): Promise<Response>
  /**
   * Serves a `response.create` message of a Responses WebSocket, made into a POST
   * /v1/responses: as `handle`, with a record that says it came over the socket
   * (docs/api.md#responses-over-websocket).
   */
  handleSocketCall(request: Request): Promise<Response>
  /**
   * A Responses WebSocket's handshake, checked as POST /v1/responses would be: undefined when its
   * credential may call, else the refusal to answer instead of upgrading.
   */
  refuseSocket(request: Request): Promise<Response | undefined>
  /** The gateway is shutting down (docs/operations.md#shutdown): a socket closes once its call in progress ends. */
  readonly draining: boolean
  /** Every endpoint the app serves, for the endpoint-rule checks. */
  endpoints: readonly { method: string; path: string }[]
  /** Exports the trace spans still queued (at most `timeoutMs`); for shutdown, after the last request ended. Resolves at once when tracing is off. */
  flushTraces(timeoutMs?: number): Promise<void>
}

/** A Responses WebSocket's credentials are those of the POST it stands for. */
const RESPONSES_RULE: EndpointRule = requiredRule('POST', '/v1/responses')

function requiredRule(method: string, path: string): EndpointRule {
  const rule = ruleFor(method, path)
  if (!rule) throw new Error(`No endpoint rule for ${method} ${path}`)
  return rule
}

export function createApp(services: Services, options: { log?: LogSink; version?: string } = {}): Gateway {
  const context = gatewayContext(services)
  const tracing = Tracing.fromConfig(services.config.traces, options.version ?? 'dev', (name) => services.catalog.provider(name))
  // Without TOLLGATE_ADMIN_TOKEN the admin API does not exist (docs/operations.md#admin-api): its endpoints are
  // not registered, so every method on every /admin path is the router's plain 404 (no 405
  // naming the methods), and /swagger documents neither the endpoints nor the admin token.
  const adminEnabled = Boolean(services.config.adminToken)
  let methods = new EndpointMethods([])
  // Find the path after the scheme, not 11 characters in: a short Host (`http://llm/v1/...`) would
  // otherwise lose the start of its path. The gateway itself speaks plain HTTP.
  const app = new Elysia({ handler: { standardHostname: false } })
    .use(swaggerEndpoints({ version: options.version ?? 'dev', adminEnabled }))
    .onError(({ code, error, request }) => renderFrameworkError(code, error, request, methods))
    .use(context)
    // Coding agents probe the base URL before their first call (Claude Code sends HEAD
    // /api/hello); the router answers HEAD for every GET endpoint.
    .get('/', () => ({ name: 'tollgate', docs: '/swagger' }), { detail: { hide: true } })
    .get('/api/hello', () => ({ name: 'tollgate' }), { detail: { hide: true } })
    .use(healthEndpoints(services))
    .use(metricsEndpoint(services))
    .use(modelEndpoints(context, services))
    .use(walletEndpoint(context, services))
    .use(usageEndpoint(context, services))
    .use(pricingEndpoint(context, services))
    .use(surfaceEndpoints(context, services))
    .use(adminEnabled ? adminEndpoints(context, services) : new Elysia({ name: 'endpoints/admin-disabled' }))
    .use(adminEnabled ? consoleEndpoints() : new Elysia({ name: 'endpoints/console-disabled' }))
  methods = new EndpointMethods(app.routes)
  const metrics = metricsSink((id) => services.catalog.model(id) !== undefined || services.catalog.alias(id) !== undefined)
  /**
   * Where every request's record goes when it ends: the log, metrics, traces and the activity
   * table. One sink for all: a stream keeps its record alive to its last byte, and a closure
   * made per request would keep all of the request's scope (the request, its answer) alive with it.
   */
  const sink: RequestRecordSink = {
    streamOpened: (opened) => metrics.streamOpened(opened),
    finished: (finished) => {
      logRequest(options.log, finished, services.config.logLevel)
      metrics.finished(finished)
      tracing?.finished(finished)
      if (services.activity.enabled && isRecordedEndpoint(finished.method, finished.pathTemplate)) {
        services.activity.add(activityRowOf(finished, finished.pathTemplate))
      }
    },
  }

  return {
    endpoints: app.routes.map((endpoint) => ({ method: endpoint.method, path: endpoint.path })),
    flushTraces: async (timeoutMs) => tracing?.flush(timeoutMs),
    get draining() {
      return services.readiness.draining
    },
    async refuseSocket(request) {
      // The handshake has a log line of its own (GET /v1/responses, 101 or the refusal); each call on the socket has its own too.
      const record = new RequestRecord(newId('req'), 'GET', sink)
      record.pathTemplate = '/v1/responses'
      record.transport = 'websocket'
      try {
        await services.authenticator.authenticate(RESPONSES_RULE, request.headers, undefined, (caller) => {
          record.party = partyOf(caller)
        })
        record.finish(101, 'ok')
        return undefined
      } catch (error) {
        const refused = asGatewayError(error, record.requestId)
        record.answeredError(refused.code)
        record.finish(refused.status, outcomeOfStatus(refused.status))
        return withHeaders(renderError(refused, 'openai'), { 'x-request-id': record.requestId })
      }
    },
    handle: (request) => handle(request, 'http'),
    handleSocketCall: (request) => handle(request, 'websocket'),
  }

  async function handle(request: Request, transport: RequestTransport): Promise<Response> {
    const requestId = newId('req')
    const record = new RequestRecord(requestId, request.method, sink)
    record.transport = transport
    const requestContext: RequestContext = { requestId, answerHeaders: {}, record }
    attachContext(request, requestContext)
    const pathname = pathOf(request)
    record.pathTemplate = methods.template(pathname ?? '/')
    record.trace = tracing?.contextFor(request.headers, record.pathTemplate)
    const envelope = envelopeOfPath(pathname ?? '/')
    let response: Response
    try {
      if (pathname === undefined) throw new InvalidRequestError('The request URL is malformed (check the Host header).')
      response = await app.handle(request)
    } catch (error) {
      const answered = asGatewayError(error, requestId)
      record.answeredError(answered.code)
      response = renderError(answered, envelope)
    }
    // The Anthropic SDKs read the id from `request-id` (Anthropic's own header: `_request_id`
    // on results, `requestID` on errors); it also replaces any a native upstream's answer carried.
    // A replayed answer (docs/api.md#idempotent-retries) keeps the id of the request that made it.
    const answerId = (response.headers.get(REPLAYED_HEADER) === 'true' && response.headers.get('x-request-id')) || requestId
    const ids: Record<string, string> = envelope === 'messages' ? { 'x-request-id': answerId, 'request-id': answerId } : { 'x-request-id': answerId }
    response = withHeaders(response, { ...requestContext.answerHeaders, ...ids })
    // A stream ends with its last byte (the relay finishes its record); anything else ends here.
    // A client that left before its answer was ready never reads it, whatever failure its
    // leaving caused (the upstream call is aborted with it): 499, not that failure's 502.
    if (!record.isStreaming) {
      if (request.signal.aborted) record.finish(CLIENT_CLOSED_STATUS, 'client_closed')
      else record.finish(response.status, outcomeOfStatus(response.status))
    }
    return response
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
