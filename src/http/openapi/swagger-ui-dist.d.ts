// The viewer's files, imported with `{ type: 'file' }`: each is the path of the file (inside the
// compiled binary, a path in its embedded file system).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/favicon-32x32.png' {
  const path: string
  export default path
}
