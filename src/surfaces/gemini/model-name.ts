import type { Caller } from '../../auth/authenticate'
import type { Catalog } from '../../catalog/catalog'
import type { ModelType } from '../../catalog/catalog-schema'
import { InvalidRequestError } from '../../errors/kinds'
import type { Services } from '../../services/services'
import { type CatalogueModel, resolveTypedModel } from '../typed-model'

/**
 * The gateway model id a Gemini path names (docs/api.md#gemini-api): a gateway id (its slash raw
 * or `%2F`, which the router has decoded), optionally after `models/` as Google's resource names
 * write it, or the part after a vendor prefix when exactly one model has it (`gemini-2.5-pro` for
 * `google/gemini-2.5-pro`), which is how Google's SDKs and Gemini CLI name models.
 */
export function gatewayModelId(catalog: Catalog, named: string): string {
  const name = named.startsWith('models/') ? named.slice('models/'.length) : named
  if (name.includes('/') || catalog.model(name) || catalog.alias(name)) return name
  const matches = catalog.listModels().filter((model) => model.id.slice(model.id.indexOf('/') + 1) === name)
  if (matches.length > 1) {
    throw new InvalidRequestError(`'${name}' names several models (${matches.map((model) => model.id).join(', ')}); name one with its vendor prefix.`, {
      param: 'model',
    })
  }
  return matches[0]?.id ?? name
}

/** The catalogue model of `type` a Gemini path names, existing and allowed for the caller; aliases and custom models are served by chat completions. */
export function resolveGeminiModel(
  services: Pick<Services, 'catalog' | 'customModels'>,
  caller: Caller,
  named: string,
  type: ModelType,
): Promise<CatalogueModel> {
  return resolveTypedModel(services, caller, gatewayModelId(services.catalog, named), type, 'this Gemini API method')
}
