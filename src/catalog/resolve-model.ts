import type { Caller } from '../auth/authenticate'
import { isModelAllowed } from '../auth/model-access'
import { ModelNotAllowedError, ModelNotFoundError, ModelNotSupportedError } from '../errors/kinds'
import type { Catalog } from './catalog'
import type { AliasEntry, ModelEntry } from './catalog-schema'
import type { CustomModelRow, CustomModelStore } from './custom-models'

/**
 * Where model ids are looked up: the catalogue new requests see (read when a lookup starts, as a
 * reload replaces it) and the accounts' custom models.
 */
export interface ModelSources {
  readonly catalog: Catalog
  readonly customModels: CustomModelStore
}

/** What a requested model id names, for the caller who asked. */
export type ResolvedModel =
  | { kind: 'model'; model: ModelEntry }
  | { kind: 'alias'; alias: AliasEntry }
  | { kind: 'custom'; custom: CustomModelRow; base: ModelEntry }

/**
 * The one check before any billable call: the model must exist for this caller (404
 * model_not_found; another account's custom model does not exist for it) and be among the
 * key's allowed models (403 model_not_allowed).
 */
export async function resolveModel(services: ModelSources, caller: Caller, id: string): Promise<ResolvedModel> {
  const resolved = await lookup(services, caller, id)
  if (!resolved) throw new ModelNotFoundError(`The model '${id}' does not exist; GET /v1/models lists the models this key can use.`, { param: 'model' })
  if (caller.kind === 'api-key' && !isModelAllowed(caller.key.allowedModels, id)) {
    throw new ModelNotAllowedError(`This API key may not use the model '${id}'.`, { param: 'model' })
  }
  return resolved
}

/** 400 model_not_supported unless the model is of the type the endpoint serves (aliases and custom models are chat). */
export function requireModelType(resolved: ResolvedModel, type: ModelEntry['type'], endpoint: string): void {
  if (resolved.kind === 'model' && resolved.model.type !== type) {
    throw new ModelNotSupportedError(`'${resolved.model.id}' is a ${resolved.model.type} model; ${endpoint} serves ${type} models.`, { param: 'model' })
  }
}

async function lookup(services: ModelSources, caller: Caller, id: string): Promise<ResolvedModel | undefined> {
  const model = services.catalog.model(id)
  if (model) return { kind: 'model', model }
  const alias = services.catalog.alias(id)
  if (alias) return { kind: 'alias', alias }
  if (caller.kind !== 'api-key') return undefined
  const custom = await services.customModels.find(caller.key.accountId, id)
  const base = custom ? services.catalog.model(custom.baseModel) : undefined
  return custom && base ? { kind: 'custom', custom, base } : undefined
}
