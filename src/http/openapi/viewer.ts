// The API viewer (Swagger UI) is carried inside the gateway: importing its files as files makes
// `bun build --compile` embed them, so /swagger renders with no network (docs/operations.md#api-docs).

import iconPath from 'swagger-ui-dist/favicon-32x32.png' with { type: 'file' }
import viewerPackage from 'swagger-ui-dist/package.json' with { type: 'json' }
import stylePath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import scriptPath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }

export interface ViewerAsset {
  /** Where the gateway serves it. */
  path: string
  file: string
  contentType: string
}

/** The assets' URLs carry the viewer's version, so they can be cached for good: a new version is a new URL. */
const ASSETS_PATH = `/swagger/assets/${viewerPackage.version}`

export const VIEWER_ASSETS: readonly ViewerAsset[] = [
  { path: `${ASSETS_PATH}/swagger-ui-bundle.js`, file: scriptPath, contentType: 'text/javascript; charset=utf-8' },
  { path: `${ASSETS_PATH}/swagger-ui.css`, file: stylePath, contentType: 'text/css; charset=utf-8' },
  { path: `${ASSETS_PATH}/favicon-32x32.png`, file: iconPath, contentType: 'image/png' },
]

export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable'

/**
 * The page at /swagger: it loads only the gateway's own assets and document. Swagger UI's
 * validator badge would send the document to an outside service; it is turned off.
 */
export function viewerPage(title: string, documentPath: string): string {
  const options = JSON.stringify({ url: documentPath, dom_id: '#swagger-ui', validatorUrl: null, deepLinking: true, tryItOutEnabled: false })
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    <link rel="icon" type="image/png" href="${ASSETS_PATH}/favicon-32x32.png" />
    <link rel="stylesheet" href="${ASSETS_PATH}/swagger-ui.css" />
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${ASSETS_PATH}/swagger-ui-bundle.js"></script>
    <script>window.ui = SwaggerUIBundle(${options.replaceAll('<', '\\u003c')})</script>
  </body>
</html>
`
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;')
}
