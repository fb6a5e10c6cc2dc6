import type { Caller } from '../auth/authenticate'
import { isModelAllowed } from '../auth/model-access'
import type { AliasEntry, ModelEntry } from './catalog-schema'
import { CUSTOM_PREFIX, type CustomModelRow } from './custom-models'
import type { ModelSources } from './resolve-model'

/** One entry of GET /v1/models, in OpenAI's shape plus the gateway's own fields. */
export interface ModelObject {
  id: string
  object: 'model'
  created: number
  owned_by: string
  type: string
  context_window?: number
  max_output_tokens?: number
  tags?: string[]
  video_family?: string
  strategy?: string
  targets?: string[]
  base_model?: string
}

export function modelObject(model: ModelEntry, created: number): ModelObject {
  return {
    id: model.id,
    object: 'model',
    created,
    owned_by: vendorOf(model.id),
    type: model.type,
    ...(model.contextWindow ? { context_window: model.contextWindow } : {}),
    ...(model.maxOutputTokens ? { max_output_tokens: model.maxOutputTokens } : {}),
    ...(model.tags ? { tags: model.tags } : {}),
    ...(model.videoFamily ? { video_family: model.videoFamily } : {}),
  }
}

function aliasObject(alias: AliasEntry, created: number): ModelObject {
  return { id: alias.id, object: 'model', created, owned_by: 'tollgate', type: 'chat', strategy: alias.strategy, targets: alias.targets }
}

function customModelObject(row: CustomModelRow): ModelObject {
  return {
    id: `${CUSTOM_PREFIX}${row.name}`,
    object: 'model',
    created: Math.floor(row.createdAt.getTime() / 1000),
    owned_by: row.accountId,
    type: 'chat',
    base_model: row.baseModel,
  }
}

export function vendorOf(modelId: string): string {
  return modelId.slice(0, modelId.indexOf('/'))
}

/** The models a caller may see: a key sees its allowed models and its own account's custom models. */
export async function visibleModels(services: ModelSources, caller: Caller): Promise<ModelObject[]> {
  const { catalog } = services
  const all = [
    ...catalog.listModels().map((model) => modelObject(model, catalog.created)),
    ...catalog.listAliases().map((alias) => aliasObject(alias, catalog.created)),
  ]
  if (caller.kind !== 'api-key') return all
  const custom = await services.customModels.listForAccount(caller.key.accountId)
  return [...all, ...custom.map(customModelObject)].filter((model) => isModelAllowed(caller.key.allowedModels, model.id))
}

/** One model as the caller may see it, or undefined (404 for the caller). */
export async function findVisibleModel(services: ModelSources, caller: Caller, id: string): Promise<ModelObject | undefined> {
  if (caller.kind === 'api-key' && !isModelAllowed(caller.key.allowedModels, id)) return undefined
  const { catalog } = services
  const model = catalog.model(id)
  if (model) return modelObject(model, catalog.created)
  const alias = catalog.alias(id)
  if (alias) return aliasObject(alias, catalog.created)
  if (caller.kind !== 'api-key') return undefined
  const custom = await services.customModels.find(caller.key.accountId, id)
  return custom ? customModelObject(custom) : undefined
}
