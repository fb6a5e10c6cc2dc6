import { createHash, timingSafeEqual } from 'node:crypto'
import { InvalidApiKeyError, NotFoundError } from '../errors/kinds'

/**
 * Who may read GET /metrics (docs/operations.md#metrics): a Bearer token equal to
 * TOLLGATE_METRICS_TOKEN or TOLLGATE_ADMIN_TOKEN. Without either set, the endpoint is not there
 * (404). Tokens are compared as digests, in constant time, and against every accepted token,
 * so the time taken says nothing about which one came close.
 */
export function checkMetricsToken(accepted: readonly (string | undefined)[], headers: Headers): void {
  const tokens = accepted.filter((token): token is string => Boolean(token))
  if (tokens.length === 0) throw new NotFoundError('Not found.')
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '')?.[1]
  const presentedDigest = digest(presented ?? '')
  let matched = false
  for (const token of tokens) if (timingSafeEqual(presentedDigest, digest(token))) matched = true
  if (!presented || !matched) throw new InvalidApiKeyError('The metrics token is missing or wrong.')
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
