import { createHash, timingSafeEqual } from 'node:crypto'
import { InvalidApiKeyError, NotFoundError } from '../errors/kinds'

/**
 * The admin API exists only while TOLLGATE_ADMIN_TOKEN is set; without it every admin path
 * answers 404 as if it were not there. Tokens are compared as digests, in constant time.
 */
export function checkAdminToken(expected: string | undefined, headers: Headers): void {
  if (!expected) throw new NotFoundError('Not found.')
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '')?.[1]
  if (!presented || !timingSafeEqual(digest(presented), digest(expected))) {
    throw new InvalidApiKeyError('The admin token is missing or wrong.')
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
