import { InvalidRequestError } from '../errors/kinds'

/** The request header that makes a billable call idempotent (docs/api.md#idempotent-retries). */
export const IDEMPOTENCY_HEADER = 'idempotency-key'

/** 1-255 visible ASCII characters (0x21-0x7e): nothing a log line or a header could be confused by. */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/

/** The request's `Idempotency-Key`, or undefined without one; any other value is 400 invalid_request. */
export function idempotencyKeyOf(headers: Headers): string | undefined {
  const key = headers.get(IDEMPOTENCY_HEADER)
  if (key === null) return undefined
  if (!VALID_KEY.test(key)) throw new InvalidRequestError('Idempotency-Key must be 1-255 visible ASCII characters.', { param: 'Idempotency-Key' })
  return key
}
