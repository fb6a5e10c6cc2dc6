import type { MessagesPassthrough, ProviderAdapter, UpstreamTarget } from '../adapter'
import { DEFAULT_ANTHROPIC_VERSION } from './api'
import { convertPromptToMessages } from './convert-request'
import { convertMessageAnswer } from './convert-response'
import { convertMessagesStream } from './convert-stream'
import { convertMessagesUsage } from './convert-usage'
import { mapAnthropicError } from './map-error'
import { betaHeader, withoutPremiumOptions } from './price-options'

/**
 * Anthropic's native messages API: `baseUrl` has no `/v1`; `/v1/messages` is appended
 * (https://docs.claude.com/en/api/messages). The provider's key is sent, never the client's;
 * the client's `anthropic-beta` header and query string (`?beta=true`) are kept, less the betas
 * and body options that would raise the price above the catalogue's (price-options.ts).
 */
export const anthropicAdapter: ProviderAdapter = {
  sendMessages: postMessages,
  messagesUsage: convertMessagesUsage,
  sendPrompt: (target, prompt) => postMessages(target, convertPromptToMessages(prompt), { version: null, beta: null, query: '' }),
  readAnswer: convertMessageAnswer,
  readStream: convertMessagesStream,
  mapError: mapAnthropicError,
}

function postMessages(target: UpstreamTarget, body: Record<string, unknown>, passthrough: MessagesPassthrough): Promise<Response> {
  return fetch(`${target.provider.baseUrl.replace(/\/+$/, '')}/v1/messages${passthrough.query}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: body.stream ? 'text/event-stream' : 'application/json',
      'anthropic-version': passthrough.version ?? DEFAULT_ANTHROPIC_VERSION,
      ...betaHeader(passthrough.beta),
      ...(target.provider.credential ? { 'x-api-key': target.provider.credential } : {}),
    },
    body: JSON.stringify({ ...withoutPremiumOptions(body), model: target.model }),
    signal: target.signal,
  })
}

