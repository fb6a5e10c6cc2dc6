/**
 * The one HTML page of the console: every view is drawn by its script. The asset URLs carry a
 * digest of their content, so a browser may keep them for good and still gets a new console
 * after an upgrade (docs/operations.md#console).
 */
export function consolePage(scriptPath: string, stylePath: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="referrer" content="no-referrer" />
    <title>Tollgate console</title>
    <link rel="stylesheet" href="${stylePath}" />
  </head>
  <body>
    <div id="console"><noscript>The console needs JavaScript.</noscript></div>
    <script type="module" src="${scriptPath}"></script>
  </body>
</html>
`
}
