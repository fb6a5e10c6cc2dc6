import type { Caller } from '../auth/authenticate'
import { requireModelType, resolveModel, type ResolvedModel } from '../catalog/resolve-model'
import { ModelNotSupportedError } from '../errors/kinds'
import type { Services } from '../services'

/** The vendor whose models form the messages-format family: the only ones /v1/messages serves. */
const MESSAGES_VENDOR = 'anthropic'

/**
 * The catalogue model a /v1/messages request names (API.md §4.2): a bare name, as Claude Code
 * sends it, means `anthropic/<name>`; aliases, custom models and other vendors' models belong to
 * chat completions and are refused with 400 model_not_supported.
 */
export async function resolveMessagesModel(services: Services, caller: Caller, requested: string): Promise<ResolvedModel & { kind: 'model' }> {
  const id = requested.includes('/') ? requested : `${MESSAGES_VENDOR}/${requested}`
  if (!id.startsWith(`${MESSAGES_VENDOR}/`)) {
    throw new ModelNotSupportedError(`'${requested}' is not a messages-format model; call it through /v1/chat/completions.`, { param: 'model' })
  }
  const resolved = await resolveModel(services, caller, id)
  if (resolved.kind !== 'model') throw new ModelNotSupportedError(`'${requested}' is served by /v1/chat/completions only.`, { param: 'model' })
  requireModelType(resolved, 'chat', '/v1/messages')
  return resolved
}
