import { Elysia, t } from 'elysia'
import { findVisibleModel, modelObject, visibleModels } from '../../catalog/model-views'
import { ModelNotFoundError } from '../../errors/kinds'
import type { GatewayContext } from '../../http/gateway-context'
import type { Services } from '../../services'

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
const ModelListSchema = t.Object({ object: t.Literal('list'), data: t.Array(ModelObjectSchema) })

export function modelRoutes(context: GatewayContext, services: Services) {
  return new Elysia({ name: 'routes/models' })
    .use(context)
    .get('/v1/models', async ({ caller }) => ({ object: 'list' as const, data: await visibleModels(services, caller) }), {
      response: ModelListSchema,
      detail: { tags: ['Models'], summary: 'List models', description: 'Public; with an API key, only the models the key may use.' },
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
      { response: ModelListSchema, detail: { tags: ['Models'], summary: 'List models recommended for coding agents' } },
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
      { response: ModelObjectSchema, detail: { tags: ['Models'], summary: 'Retrieve a model', description: 'The id may contain a raw or %2F-encoded slash.' } },
    )
}

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}
