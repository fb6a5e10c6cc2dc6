import type { Caller } from '../auth/authenticate'
import type { ModelType } from '../catalog/catalog-schema'
import { type ResolvedModel, requireModelType, resolveModel } from '../catalog/resolve-model'
import { ModelNotSupportedError } from '../errors/kinds'
import type { Services } from '../services/services'

/** A catalogue model named by its own id: the only kind a media endpoint serves. */
export type CatalogueModel = Extract<ResolvedModel, { kind: 'model' }>

/**
 * The model a media endpoint serves: it must exist for the caller and be allowed to it, be a
 * catalogue model (aliases and custom models are chat-only: 400 model_not_supported) and be
 * of the endpoint's type (`endpoint` is the gateway's path, for the message: `/v1/embeddings`).
 */
export async function resolveTypedModel(
  services: Pick<Services, 'catalog' | 'customModels'>,
  caller: Caller,
  modelId: string,
  type: ModelType,
  endpoint: string,
): Promise<CatalogueModel> {
  const resolved = await resolveModel(services, caller, modelId)
  if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${modelId}' is served by /v1/chat/completions only.`, { param: 'model' })
  requireModelType(resolved, type, endpoint)
  return resolved
}
