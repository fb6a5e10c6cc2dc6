import type { ProviderAdapter, UpstreamTarget } from '../adapter'
import { convertChatUsage } from './convert-usage'
import { mapOpenAiError } from './map-error'

/**
 * OpenAI and every OpenAI-compatible server: `baseUrl` ends in `/v1` and paths are appended
 * (https://platform.openai.com/docs/api-reference). The provider's key is sent, never the client's.
 */
export const openAiAdapter: ProviderAdapter = {
  sendChatCompletion(target: UpstreamTarget, body: Record<string, unknown>): Promise<Response> {
    return fetch(`${target.provider.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: body.stream ? 'text/event-stream' : 'application/json',
        ...(target.provider.credential ? { authorization: `Bearer ${target.provider.credential}` } : {}),
      },
      body: JSON.stringify({ ...body, model: target.model }),
      signal: target.signal,
    })
  },
  chatUsage: convertChatUsage,
  mapError: mapOpenAiError,
}
