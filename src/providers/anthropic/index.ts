import { usageFromMessages } from '../../wire/messages/usage'
import type { Fetch, MessagesPassthrough, NativeBody, ProviderAdapter, UpstreamTarget } from '../adapter'
import { missingApiKey, readApiKey } from '../api-key'
import { convertPromptToMessages } from './convert-request'
import { convertMessageAnswer } from './convert-response'
import { convertMessagesStream } from './convert-stream'
import { mapAnthropicError } from './map-error'
import { betaHeader, withoutPremiumOptions } from './price-options'

/** The API version sent upstream when the client names none (the header is optional for clients). */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01'

/** What a translated request keeps of a client's: nothing, as no client's headers take part. */
export const NO_PASSTHROUGH: MessagesPassthrough = { version: null, beta: null, query: '' }

/**
 * Anthropic's native messages API: `baseUrl` has no `/v1`; `/v1/messages` is appended
 * (https://docs.claude.com/en/api/messages). The provider's key is sent, never the client's;
 * the client's `anthropic-beta` header and query string (`?beta=true`) are kept, less the betas
 * and body options that would raise the price above the catalogue's (price-options.ts).
 */
export function anthropicAdapter(fetch: Fetch): ProviderAdapter {
  const postMessages = (target: UpstreamTarget, body: NativeBody, passthrough: MessagesPassthrough): Promise<Response> =>
    fetch(`${target.provider.baseUrl}/v1/messages${passthrough.query}`, {
      method: 'POST',
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        accept: body.stream ? 'text/event-stream' : 'application/json',
        'anthropic-version': passthrough.version ?? DEFAULT_ANTHROPIC_VERSION,
        ...betaHeader(passthrough.beta),
        ...(target.provider.credential ? { 'x-api-key': target.provider.credential } : {}),
      },
      body: JSON.stringify({ ...withoutPremiumOptions(body, target.oneHourCacheWrites), model: target.model }),
      signal: target.signal,
    })

  return {
    messages: { send: postMessages, usage: usageFromMessages },
    translate: {
      send: (target, prompt) => postMessages(target, convertPromptToMessages(prompt), NO_PASSTHROUGH),
      readAnswer: convertMessageAnswer,
      readStream: convertMessagesStream,
    },
    mapError: mapAnthropicError,
    // Nothing beyond the common fields.
    readCredential: readApiKey,
    missingCredential: missingApiKey,
    checkConfig: () => [],
  }
}
