import { Elysia, t } from 'elysia'
import { isModelAllowed } from '../auth/model-access'
import type { GatewayContext } from '../http/gateway-context'
import { errorResponses, KEYED_READ_ERRORS } from '../http/openapi/responses'
import type { Services } from '../services/services'

export function pricingEndpoint(context: GatewayContext, services: Pick<Services, 'catalog'>) {
  return new Elysia({ name: 'endpoints/pricing' }).use(context).get(
    '/v1/pricing',
    ({ caller }) => {
      const allowed = caller.kind === 'api-key' ? caller.key.allowedModels : null
      return {
        object: 'list' as const,
        data: services.catalog
          .listModels()
          .filter((model) => isModelAllowed(allowed, model.id))
          .map((model) => ({ model: model.id, unit: 'credits' as const, ...model.pricing })),
      }
    },
    {
      response: t.Object({
        object: t.Literal('list'),
        data: t.Array(t.Object({ model: t.String(), unit: t.Literal('credits') }, { additionalProperties: t.Number() })),
      }),
      detail: {
        tags: ['Account'],
        summary: 'Prices in credits',
        description:
          'input, output, cacheRead, cacheWrite per million tokens; webSearch per call; image per image; videoSecond per second; inputChars per million characters; audioMinute per minute.',
        responses: errorResponses('openai', KEYED_READ_ERRORS),
      },
    },
  )
}
