import { Elysia } from 'elysia'
import { openApiDocument } from '../http/openapi/document'
import { ERROR_ENVELOPE_SCHEMAS } from '../http/openapi/responses'
import { ASSET_CACHE_CONTROL, VIEWER_ASSETS, viewerPage } from '../http/openapi/viewer'

const DOCUMENT_PATH = '/swagger/json'

/**
 * /swagger (the viewer), /swagger/json (the OpenAPI document) and the viewer's assets, all
 * served by the gateway itself (docs/operations.md#api-docs). The document is built from every
 * endpoint registered with the app, once, on its first request: endpoints do not change after start.
 */
export function swaggerEndpoints(options: { version: string; adminEnabled: boolean }) {
  const info = {
    title: 'Tollgate',
    version: options.version,
    description:
      'A billing and routing gateway in front of model providers. Send `Authorization: Bearer <API key>`; the messages and audio endpoints also take `x-api-key`.',
  }
  const page = viewerPage(`${info.title} API`, DOCUMENT_PATH)
  let document: object | undefined
  const app = new Elysia({ name: 'endpoints/swagger' })
    .get('/swagger', () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
    .get(
      DOCUMENT_PATH,
      () => {
        document ??= openApiDocument(app, {
          info,
          components: {
            securitySchemes: {
              apiKey: { type: 'http', scheme: 'bearer', description: 'tollgate_sk_prod_… / tollgate_sk_dev_… or a user access token' },
              xApiKey: {
                type: 'apiKey',
                in: 'header',
                name: 'x-api-key',
                description: 'An API key, where the endpoint takes the messages-client style header',
              },
              googleApiKey: { type: 'apiKey', in: 'header', name: 'x-goog-api-key', description: "An API key, as Google's clients send it (the Gemini API)" },
              googleKeyParameter: { type: 'apiKey', in: 'query', name: 'key', description: 'An API key in the query string (the Gemini API)' },
              ...(options.adminEnabled ? { adminToken: { type: 'http', scheme: 'bearer', description: 'TOLLGATE_ADMIN_TOKEN' } } : {}),
            },
            schemas: ERROR_ENVELOPE_SCHEMAS,
          },
          security: [{ apiKey: [] }],
        })
        return document
      },
      { detail: { hide: true } },
    )
  for (const asset of VIEWER_ASSETS) {
    app.get(asset.path, () => new Response(Bun.file(asset.file), { headers: { 'content-type': asset.contentType, 'cache-control': ASSET_CACHE_CONTROL } }), {
      detail: { hide: true },
    })
  }
  return app
}
