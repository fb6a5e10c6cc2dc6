import { convertPromptToMessages } from '../anthropic/convert-request'
import { convertMessageAnswer } from '../anthropic/convert-response'
import { convertMessagesStream } from '../anthropic/convert-stream'
import { convertMessagesUsage } from '../anthropic/convert-usage'
import { mapAnthropicError } from '../anthropic/map-error'
import { betaHeader, withoutPremiumOptions } from '../anthropic/price-options'
import type { MessagesPassthrough, ProviderAdapter, UpstreamTarget } from '../adapter'
import { vertexAccessToken } from './access-token'
import { generateVeoVideo } from './videos'

/** The API version Vertex AI's Anthropic publisher expects in the body. */
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16'

/**
 * Claude on Vertex AI's publisher endpoint
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude): the messages
 * body without `model` (the URL names it), with `anthropic_version`, to `:rawPredict` or
 * `:streamRawPredict`, under a Google bearer token. Answers and streams are Anthropic's format;
 * the betas and body options priced above the catalogue are dropped as on Anthropic's own API.
 */
export const vertexAdapter: ProviderAdapter = {
  sendMessages: postRawPredict,
  messagesUsage: convertMessagesUsage,
  sendPrompt: (target, prompt) => postRawPredict(target, convertPromptToMessages(prompt), { version: null, beta: null, query: '' }),
  readAnswer: convertMessageAnswer,
  readStream: convertMessagesStream,
  generateVideo: generateVeoVideo,
  mapError: mapAnthropicError,
}

async function postRawPredict(target: UpstreamTarget, body: Record<string, unknown>, passthrough: MessagesPassthrough): Promise<Response> {
  const { provider } = target
  const method = body.stream ? 'streamRawPredict' : 'rawPredict'
  const url = `${provider.baseUrl.replace(/\/+$/, '')}/v1/projects/${provider.project}/locations/${provider.location}/publishers/anthropic/models/${target.model}:${method}`
  const { model: _model, ...rest } = body
  const token = await vertexAccessToken(provider, target.signal)
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: body.stream ? 'text/event-stream' : 'application/json',
      ...betaHeader(passthrough.beta),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ ...withoutPremiumOptions(rest), anthropic_version: VERTEX_ANTHROPIC_VERSION }),
    signal: target.signal,
  })
}
