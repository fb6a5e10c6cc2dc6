import { usageFromMessages } from '../../wire/messages/usage'
import type { Fetch, MessagesPassthrough, NativeBody, ProviderAdapter, UpstreamTarget } from '../adapter'
import { NO_PASSTHROUGH } from '../anthropic'
import { convertPromptToMessages } from '../anthropic/convert-request'
import { convertMessageAnswer } from '../anthropic/convert-response'
import { convertMessagesStream } from '../anthropic/convert-stream'
import { mapAnthropicError } from '../anthropic/map-error'
import { betaHeader, withoutPremiumOptions } from '../anthropic/price-options'
import type { ProviderConfig, ProviderConfigProblem } from '../provider-config'
import { vertexAccessToken } from './access-token'
import { type RawPredictRequest, VERTEX_ANTHROPIC_VERSION } from './api'
import { missingVertexCredential, readVertexCredential } from './credential'
import { generateVeoVideo } from './videos'

/**
 * Claude on Vertex AI's publisher endpoint
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude): the messages
 * body without `model` (the URL names it), with `anthropic_version`, to `:rawPredict` or
 * `:streamRawPredict`, under a Google bearer token. Answers and streams are Anthropic's format;
 * the betas and body options priced above the catalogue are dropped as on Anthropic's own API.
 * Veo video generation is reached under the same project and location.
 */
export function vertexAdapter(fetch: Fetch): ProviderAdapter {
  const postRawPredict = async (target: UpstreamTarget, body: NativeBody, passthrough: MessagesPassthrough): Promise<Response> => {
    const { provider } = target
    const method = body.stream ? 'streamRawPredict' : 'rawPredict'
    const url = `${provider.baseUrl}/v1/projects/${provider.project}/locations/${provider.location}/publishers/anthropic/models/${target.model}:${method}`
    const { model: _model, ...rest } = body
    const token = await vertexAccessToken(fetch, provider, target.signal)
    const sent: RawPredictRequest = { ...withoutPremiumOptions(rest, target.oneHourCacheWrites), anthropic_version: VERTEX_ANTHROPIC_VERSION }
    return fetch(url, {
      method: 'POST',
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        accept: body.stream ? 'text/event-stream' : 'application/json',
        ...betaHeader(passthrough.beta),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(sent),
      signal: target.signal,
    })
  }

  return {
    messages: { send: postRawPredict, usage: usageFromMessages },
    translate: {
      send: (target, prompt) => postRawPredict(target, convertPromptToMessages(prompt), NO_PASSTHROUGH),
      readAnswer: convertMessageAnswer,
      readStream: convertMessagesStream,
    },
    video: { generate: (target, request, onStarted) => generateVeoVideo(fetch, target, request, onStarted), cancel: null },
    mapError: mapAnthropicError,
    readCredential: readVertexCredential,
    missingCredential: missingVertexCredential,
    checkConfig: checkVertexConfig,
  }
}

/**
 * Every Vertex URL names a project and a location. The problem is the entry's as a whole
 * (field ''), as one setting is no use without the other.
 */
function checkVertexConfig(provider: ProviderConfig): ProviderConfigProblem[] {
  return provider.project && provider.location ? [] : [{ field: '', message: 'vertex providers need "project" and "location"' }]
}
