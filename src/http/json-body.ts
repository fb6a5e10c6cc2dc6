import { InvalidRequestError } from '../errors/kinds'
import { bodyLimitFor, readLimited } from './body-limits'

/**
 * Request bodies are read as strict UTF-8 JSON whatever the content type says (curl's `-d`
 * sends form encoding), except multipart forms. A body that fails is not rejected here but
 * marked, so that authentication still answers first; only a body over its path's size limit
 * is refused at once (413), before it is read.
 */
export class MalformedBody {
  constructor(readonly reason: string) {}

  toError(): InvalidRequestError {
    return new InvalidRequestError(`The request body is not valid JSON: ${this.reason}`)
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

export async function parseJsonBody(request: Request): Promise<unknown> {
  const bytes = await readLimited(request, bodyLimitFor(new URL(request.url).pathname))
  // null, not undefined: undefined would hand the body to the framework's own parser.
  if (bytes.byteLength === 0) return null
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  } catch {
    return new MalformedBody('it is not valid UTF-8.')
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    return new MalformedBody(error instanceof Error ? error.message : 'unparseable.')
  }
}
