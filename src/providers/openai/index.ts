import type { ProviderAdapter, UpstreamTarget } from '../adapter'
import { convertPromptToChat } from './convert-request'
import { convertChatAnswer } from './convert-response'
import { convertChatStream } from './convert-stream'
import { convertChatUsage, convertResponsesUsage } from './convert-usage'
import { mapOpenAiError } from './map-error'
import { withoutPremiumResponsesOptions, withoutPremiumTier } from './price-options'
import { cancelOpenAiVideo, generateOpenAiVideo } from './videos'

/**
 * OpenAI and every OpenAI-compatible server: `baseUrl` ends in `/v1` and paths are appended
 * (https://platform.openai.com/docs/api-reference). The provider's key is sent, never the client's,
 * and chat and Responses bodies lose a service tier priced above the catalogue.
 */
export const openAiAdapter: ProviderAdapter = {
  sendChatCompletion: postChatCompletion,
  chatUsage: convertChatUsage,
  sendOpenAiRequest: postToOpenAi,
  // Every provider of this API is tried natively unless `responsesApi: false`; one that answers
  // 404 or 405 is reached by translation from then on (dispatch/responses-api-memory.ts).
  sendResponses: (target, body) => postToOpenAi(target, '/responses', JSON.stringify({ ...withoutPremiumResponsesOptions(body), model: target.model })),
  responsesUsage: convertResponsesUsage,
  generateVideo: generateOpenAiVideo,
  cancelVideoJob: cancelOpenAiVideo,
  sendPrompt: (target, prompt) => postChatCompletion(target, convertPromptToChat(prompt)),
  readAnswer: convertChatAnswer,
  readStream: convertChatStream,
  mapError: mapOpenAiError,
}

function postChatCompletion(target: UpstreamTarget, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${target.provider.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: body.stream ? 'text/event-stream' : 'application/json',
      ...(target.provider.credential ? { authorization: `Bearer ${target.provider.credential}` } : {}),
    },
    body: JSON.stringify({ ...withoutPremiumTier(body), model: target.model }),
    signal: target.signal,
  })
}

function postToOpenAi(target: UpstreamTarget, path: string, body: BodyInit): Promise<Response> {
  return fetch(`${target.provider.baseUrl.replace(/\/+$/, '')}${path}`, {
    method: 'POST',
    // A form sets its own multipart content type; everything else here is JSON.
    headers: {
      ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }),
      ...(target.provider.credential ? { authorization: `Bearer ${target.provider.credential}` } : {}),
    },
    body,
    signal: target.signal,
  })
}
