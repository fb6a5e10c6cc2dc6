import { usageFromChat } from '../../wire/chat-completions/usage'
import { usageFromResponses } from '../../wire/responses/usage'
import type { Fetch, MediaPath, NativeBody, ProviderAdapter, UpstreamTarget } from '../adapter'
import { missingApiKey, readApiKey } from '../api-key'
import { convertPromptToChat } from './convert-request'
import { convertChatAnswer } from './convert-response'
import { convertChatStream } from './convert-stream'
import { mapOpenAiError } from './map-error'
import { chatOutputLimitField, withChatOutputLimit } from './output-limit'
import { withoutPremiumResponsesOptions, withoutPremiumTier } from './price-options'
import { cancelOpenAiVideo, generateOpenAiVideo } from './videos'

/**
 * OpenAI and every OpenAI-compatible server: `baseUrl` ends in `/v1` and paths are appended
 * (https://platform.openai.com/docs/api-reference). The provider's key is sent, never the client's,
 * and chat and Responses bodies lose a service tier priced above the catalogue.
 */
export function openAiAdapter(fetch: Fetch): ProviderAdapter {
  const postChatCompletion = (target: UpstreamTarget, body: NativeBody): Promise<Response> =>
    fetch(`${target.provider.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        accept: body.stream ? 'text/event-stream' : 'application/json',
        ...bearer(target),
      },
      body: JSON.stringify({ ...withoutPremiumTier(body), model: target.model }),
      signal: target.signal,
    })

  const postToOpenAi = (target: UpstreamTarget, path: MediaPath | '/responses', body: BodyInit, stream = false): Promise<Response> =>
    fetch(`${target.provider.baseUrl}${path}`, {
      method: 'POST',
      // A form sets its own multipart content type; everything else here is JSON.
      headers: {
        ...target.headers,
        ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }),
        ...(stream ? { accept: 'text/event-stream' } : {}),
        ...bearer(target),
      },
      body,
      signal: target.signal,
    })

  return {
    chat: { send: (target, body, outputLimit) => postChatCompletion(target, withChatOutputLimit(body, outputLimit, target.provider)), usage: usageFromChat },
    // Every provider of this API is tried natively unless `responsesApi: false`; one that answers
    // 404 or 405 is reached by translation from then on (surfaces/responses/api-memory.ts remembers which).
    responses: {
      send: (target, body) =>
        postToOpenAi(target, '/responses', JSON.stringify({ ...withoutPremiumResponsesOptions(body), model: target.model }), body.stream === true),
      usage: usageFromResponses,
    },
    media: { send: postToOpenAi },
    translate: {
      send: (target, prompt) => postChatCompletion(target, convertPromptToChat(prompt, chatOutputLimitField(target.provider))),
      readAnswer: convertChatAnswer,
      readStream: convertChatStream,
    },
    video: {
      generate: (target, request, onStarted) => generateOpenAiVideo(fetch, target, request, onStarted),
      cancel: (target, jobId) => cancelOpenAiVideo(fetch, target, jobId),
    },
    mapError: mapOpenAiError,
    // Nothing beyond the common fields: a key is optional (local servers take none).
    readCredential: readApiKey,
    missingCredential: missingApiKey,
    checkConfig: () => [],
  }
}

function bearer(target: UpstreamTarget): Record<string, string> {
  return target.provider.credential ? { authorization: `Bearer ${target.provider.credential}` } : {}
}
