/** The longest wait an upstream's `Retry-After` may set: a hostile or broken header cannot park a route for hours. */
export const MAX_RETRY_AFTER_MS = 300_000

/**
 * An HTTP date as RFC 9110 section 5.6.7 writes it (IMF-fixdate, or the obsolete RFC 850 form),
 * in GMT. The asctime form names no zone, so it is not read (it would be taken as local time).
 */
const HTTP_DATE = /^[A-Za-z]{3,9}, [0-9A-Za-z :-]{10,40} GMT$/

/**
 * How long an upstream asked to be left alone, in milliseconds, from a `Retry-After` header:
 * whole seconds or an HTTP date (RFC 9110 section 10.2.3), at most MAX_RETRY_AFTER_MS.
 * Undefined when there is no header, when it is neither form, and when it asks for no wait
 * at all (0, or a date already past): then the caller's own default applies.
 */
export function retryAfterMs(header: string | null, nowMs: number): number | undefined {
  const value = header?.trim()
  if (!value || value.length > 64) return undefined
  const waitMs = /^\d+$/.test(value) ? Number(value) * 1000 : HTTP_DATE.test(value) ? Date.parse(value) - nowMs : Number.NaN
  if (!Number.isFinite(waitMs) || waitMs <= 0) return undefined
  return Math.min(waitMs, MAX_RETRY_AFTER_MS)
}
