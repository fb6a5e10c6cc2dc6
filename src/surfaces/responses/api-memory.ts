import type { ProviderConfig } from '../../providers/provider-config'

/**
 * Providers left to detect the Responses API (`responsesApi` unset) that answered 404 or 405 on
 * `/responses`. Later calls translate through chat completions at once instead
 * of asking again. In memory and per process: a restart asks once more, which costs a single
 * refused request. Keyed by the provider's config object, so every loaded config starts clean.
 */
const withoutResponsesApi = new WeakSet<ProviderConfig>()

/** How the Responses API is reached on a provider whose adapter can send it. */
export type ResponsesApiMode =
  /** Natively; a 404 or 405 is the client's error (`responsesApi: true`). */
  | 'native'
  /** Natively, switching to translation on this same route at a 404 or 405 (unset, not yet refused). */
  | 'native-with-fallback'
  /** By translation through chat completions (`responsesApi: false`, or refused before). */
  | 'translated'

export function responsesApiMode(provider: ProviderConfig): ResponsesApiMode {
  if (provider.responsesApi === true) return 'native'
  if (provider.responsesApi === false || withoutResponsesApi.has(provider)) return 'translated'
  return 'native-with-fallback'
}

/** Whether a status on `/responses` says the server has no such endpoint (rather than refusing this request). */
export function isMissingEndpoint(status: number): boolean {
  return status === 404 || status === 405
}

export function rememberWithoutResponsesApi(provider: ProviderConfig): void {
  withoutResponsesApi.add(provider)
}
