import { Elysia, t } from 'elysia'
import { findVisibleModel, modelObject, visibleModels } from '../catalog/model-views'
import { ModelNotFoundError } from '../errors/kinds'
import type { GatewayContext } from '../http/gateway-context'
import { type ErrorStatus, errorResponses, PUBLIC_ERRORS } from '../http/openapi/responses'
import type { Services } from '../services/services'

const ModelObjectSchema = t.Object(
  {
    id: t.String(),
    object: t.Literal('model'),
    created: t.Integer(),
    owned_by: t.String(),
    type: t.String(),
  },
  { additionalProperties: true },
)
/** Listing models is open to all; a credential, when sent, is checked (and rate-limited) like anywhere else. */
const LISTING_ERRORS: readonly ErrorStatus[] = [400, 401, 429, 500, 503]

const ModelListSchema = t.Object({ object: t.Literal('list'), data: t.Array(ModelObjectSchema) })

export function modelEndpoints(context: GatewayContext, services: Pick<Services, 'catalog' | 'customModels'>) {
  return new Elysia({ name: 'endpoints/models' })
    .use(context)
    .get('/v1/models', async ({ caller }) => ({ object: 'list' as const, data: await visibleModels(services, caller) }), {
      response: ModelListSchema,
      detail: {
        tags: ['Models'],
        summary: 'List models',
        description: 'Public; with an API key, only the models the key may use.',
        responses: errorResponses('openai', LISTING_ERRORS),
      },
    })
    .get(
      '/v1/models/coding',
      () => ({
        object: 'list' as const,
        data: services.catalog
          .listModels()
          .filter((model) => model.tags?.includes('coding'))
          .map((model) => modelObject(model, services.catalog.created)),
      }),
      {
        response: ModelListSchema,
        detail: { tags: ['Models'], summary: 'List models recommended for coding agents', responses: errorResponses('openai', PUBLIC_ERRORS) },
      },
    )
    .get(
      '/v1/models/*',
      async ({ caller, params }) => {
        // Ids contain a slash; the openai SDK sends it encoded as %2F.
        const id = safeDecode(params['*'])
        const model = await findVisibleModel(services, caller, id)
        if (!model) throw new ModelNotFoundError(`The model '${id}' does not exist or you do not have access to it.`, { param: 'model' })
        return model
      },
      {
        response: ModelObjectSchema,
        detail: {
          tags: ['Models'],
          summary: 'Retrieve a model',
          // The endpoint's path ends in `*` (an id holds a slash); the document names it {id}.
          parameters: [
            {
              name: 'id',
              in: 'path',
              required: true,
              schema: { type: 'string' },
              description: 'The model id, e.g. `openai/gpt-4o`; its slash raw or encoded as %2F',
            },
          ],
          responses: errorResponses('openai', [...LISTING_ERRORS, 404]),
        },
      },
    )
}

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}
