import { bodyLimitFor, boundedChunks } from './body-limits'
import { parseJsonBody } from './json-body'
import { boundaryOf, readMultipartForm } from './multipart-form'

/**
 * What the framework's parse step leaves as the body: a promise to read it later. Bodies are
 * read only once the caller is known (gateway-context.ts), so a client without a credential
 * cannot make the gateway buffer, or wait on, a body of any kind.
 */
export class UnreadBody {}

export const UNREAD_BODY = new UnreadBody()

/**
 * The body as the endpoints expect it: a multipart form as a record of fields and files, anything
 * else as JSON (or a MalformedBody). Both are read under the path's size limit and the body
 * timing of body-limits.ts.
 */
export async function readRequestBody(request: Request): Promise<unknown> {
  const contentType = request.headers.get('content-type') ?? ''
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) return parseJsonBody(request)
  const boundary = boundaryOf(contentType)
  return readMultipartForm(boundedChunks(request, bodyLimitFor(new URL(request.url).pathname)), boundary)
}
