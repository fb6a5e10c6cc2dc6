import { Elysia } from 'elysia'
import type { GatewayContext } from '../http/gateway-context'
import type { Services } from '../services/services'
import { chatCompletionsEndpoint } from './chat-completions/endpoint'
import { embeddingsEndpoint } from './embeddings/endpoint'
import { geminiEndpoints } from './gemini/endpoint'
import { imagesEndpoint } from './images/endpoint'
import { countTokensEndpoint, messagesEndpoint } from './messages/endpoint'
import { responsesEndpoint } from './responses/endpoint'
import { speechEndpoint } from './speech/endpoint'
import { transcriptionsEndpoint } from './transcriptions/endpoint'
import { videosEndpoint } from './videos/endpoint'

/** Every client surface the gateway serves: one line per surface. */
const SURFACE_ENDPOINTS = [
  chatCompletionsEndpoint,
  messagesEndpoint,
  countTokensEndpoint,
  embeddingsEndpoint,
  imagesEndpoint,
  speechEndpoint,
  transcriptionsEndpoint,
  videosEndpoint,
  responsesEndpoint,
  geminiEndpoints,
]

export function surfaceEndpoints(context: GatewayContext, services: Services) {
  const app = new Elysia({ name: 'surfaces' })
  for (const endpoint of SURFACE_ENDPOINTS) app.use(endpoint(context, services))
  return app
}
