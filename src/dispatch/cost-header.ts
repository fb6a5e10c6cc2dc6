import { withHeaders } from '../http/response-headers'

/**
 * The header that carries a whole (not streamed) billed answer's cost in credits: the same
 * number as the body's `usage.cost`, so that a client reading binary answers (speech, images)
 * or one that does not parse the body sees it too (docs/billing.md#cost-and-rate-limit-headers).
 */
export const COST_HEADER = 'x-tollgate-cost'

/** `response` with the credits its call was charged in the cost header. */
export function withCost(response: Response, credits: number): Response {
  // The number as JSON writes it, so the header and `usage.cost` read the same.
  return withHeaders(response, { [COST_HEADER]: JSON.stringify(credits) })
}
