import type { BilledCall } from './billed-call'
import { withCost } from './cost-header'
import type { PricedAnswer, Route, UpstreamAnswer } from './surface'

/**
 * Delivery for the surfaces billed by what the upstream returned rather than by token usage
 * (embeddings, images, speech, transcriptions, videos): the surface prices the answer, and the
 * call is settled for that price.
 */

/**
 * Prices what the route that answered returned, settles the call for it and answers the client
 * with the credits taken. Throwing means the upstream answered with something unusable: the
 * dispatcher then releases the hold.
 */
export async function deliverPriced<R extends Route>(
  call: BilledCall,
  answer: UpstreamAnswer<R>,
  price: (response: Response, route: R) => Promise<PricedAnswer>,
): Promise<Response> {
  return settlePriced(call, answer.route, await price(answer.response, answer.route))
}

/** Settles the call for a priced answer (capped at the hold, against the model that priced it and the provider that served it), then answers with the credits taken, in the body and the cost header. */
export async function settlePriced(call: BilledCall, route: Route, priced: PricedAnswer): Promise<Response> {
  const settled = await call.settleCost(route, priced.cost, priced.usage)
  return withCost(priced.respond(settled.cost), settled.cost)
}
