import { chargePerUnit } from '../../billing/pricing'
import type { Surface } from '../../dispatch/surface'
import { readJsonObject, usageWithCost } from '../../streaming/upstream-json'
import { type MediaRoute, mediaPlan } from '../routes'
import { resolveTypedModel } from '../typed-model'
import type { ImagesBody } from './schema'

/**
 * POST /v1/images/generations, OpenAI-format routes only: the body goes as it is (the model
 * replaced by the route's), the hold covers the `n` images asked for, and the charge is per
 * image in the answer's `data`.
 */
export const imagesSurface: Surface<ImagesBody, MediaRoute> = {
  async plan(services, { caller, body }) {
    const resolved = await resolveTypedModel(services, caller, body.model, 'image', '/v1/images/generations')
    const { model } = resolved
    return mediaPlan(resolved, {
      holdAmount: chargePerUnit(model.pricing.image, body.n ?? 1),
      send: (route, target) => route.media.send(target, '/images/generations', JSON.stringify({ ...body, model: route.upstreamModel })),
      async price(response) {
        const reply = await readJsonObject(response)
        const images = Array.isArray(reply.data) ? reply.data.length : 0
        return {
          cost: () => chargePerUnit(model.pricing.image, images),
          usage: { images },
          respond: (cost) => Response.json({ ...reply, usage: usageWithCost(reply.usage, cost) }),
        }
      },
    })
  },
}
